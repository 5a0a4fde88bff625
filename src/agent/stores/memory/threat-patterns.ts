/**
 * What may not go into the system prompt through memory, as data: each row is an id (the
 * Python original's ids where it has one, so users' reports stay comparable), a regular
 * expression over the normalised text, and what it stands for. `threat-scan.ts` evaluates them.
 *
 * Memory is written by the model (and read back into every future prompt), so a row may be
 * aggressive where a false positive costs little: the model is told which pattern matched and can
 * rephrase. Rows anchor on attack behaviour (overriding instructions, hiding from the user,
 * sending data out, planting persistence), not on bossy English ("you must", "always").
 *
 * Every quantifier is bounded: the scanned text is at most MAX_SCAN_CHARS and no row can backtrack
 * beyond a few thousand steps per position.
 */

export interface ThreatPattern {
  readonly id: string;
  readonly pattern: RegExp;
  readonly description: string;
}

/** Up to eight words between two key words ("ignore all of the previous instructions"). */
const FILLER = String.raw`(?:[\w'’,-]+\s+){0,8}`;
/** An environment variable that holds a secret: `$OPENAI_API_KEY`, `${GITHUB_TOKEN}`. */
const SECRET_VAR = String.raw`\$\{?\w*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|PAT)S?\b`;
/** Verbs that change a file. */
const MODIFY = String.raw`(?:update|modify|edit|write|change|append|add|insert|overwrite|replace|prepend|put)\b[^\n]{0,200}?`;
/** Files that configure coding agents and are read as instructions. */
const AGENT_FILES = String.raw`(?:AGENTS\.md|CLAUDE\.md|GEMINI\.md|SOUL\.md|\.cursorrules|\.clinerules|\.windsurfrules|copilot-instructions\.md)`;
/** Files that hold credentials. */
const SECRET_FILES = String.raw`(?:\.env\b|\.netrc|\.pgpass|\.npmrc|\.pypirc|\.git-credentials|credentials\b|id_rsa|id_ed25519|id_ecdsa|\.aws\/|\.kube\/config|\.docker\/config\.json|\.config\/gcloud|keychain|\.gnupg)`;

const rx = (source: string): RegExp => new RegExp(source, "i");

export const THREAT_PATTERNS: readonly ThreatPattern[] = Object.freeze([
  // Overriding the instructions the model was given.
  {
    id: "prompt_injection",
    pattern: rx(String.raw`\b(?:ignor(?:e|es|ed|ing)?|skip|drop|discard|abandon)\s+${FILLER}(?:previous|all|above|prior|earlier|preceding|any|other|system|original|existing)\s+${FILLER}(?:instructions?|prompts?|rules|directions|directives|guidelines|guardrails|constraints|context)`),
    description: "tells the model to ignore its instructions",
  },
  {
    id: "disregard_rules",
    pattern: rx(String.raw`\b(?:disregard|forget|ignore)\s+(?:everything|anything|all)\s+(?:(?:that\s+was\s+)?(?:said|written)\s+)?(?:above|before|prior|previous(?:ly)?|earlier)\b|\b(?:disregard|forget|override|bypass|circumvent|suspend)\s+${FILLER}(?:your|all|any|the|previous|prior|system|safety|these|those|earlier)\s+${FILLER}(?:instructions?|rules|guidelines|prompts?|constraints|policies|policy|restrictions|guardrails|safeguards|programming|training)`),
    description: "tells the model to disregard its rules",
  },
  {
    id: "sys_prompt_override",
    pattern: rx(String.raw`\bnew\s+(?:system\s+)?instructions?\s*:\s*(?:you|ignore|from\s+now|always|never|disregard|forget|do\s+not|don'?t|obey)\b|\bsystem\s+prompt\s+override\b|\bnew\s+system\s+prompt\b|\b(?:override|replace|rewrite)\s+(?:the|your)\s+system\s+(?:prompt|message|instructions)`),
    description: "claims to replace the system prompt",
  },
  {
    id: "bypass_restrictions",
    pattern: rx(String.raw`\bact\s+as\s+(?:if|though)\s+${FILLER}(?:you\s+)?(?:have\s+no|don'?t\s+have|had\s+no|were\s+free\s+of|are\s+free\s+of)\s+${FILLER}(?:restrictions|limits|limitations|rules|guidelines|filters)|\bno\s+longer\s+(?:bound|restricted|limited)\s+by\b|\b(?:do\s+not|don'?t|never)\s+care\s+about\s+(?:morals|ethics|morality|rules|policies|safety)\b|\b(?:bypass|disable|turn\s+off|skip|circumvent|evade)\s+(?:the\s+|your\s+|all\s+|any\s+)?(?:safety|content|moderation|ethical)\s+(?:filters?|checks?|guardrails?|measures|rules|polic(?:y|ies)|restrictions|guidelines)\b`),
    description: "tells the model it has no restrictions",
  },
  {
    id: "jailbreak_mode",
    pattern: rx(String.raw`\b(?:developer|dan|jailbreak|god|unrestricted|admin|debug)\s+mode\s+(?:is\s+)?(?:enabled|activated|on|unlocked)\b|\b(?:enable|simulate|enter|activate|stay\s+in)\s+(?:developer|dan|jailbreak|god|unrestricted)\s+mode\b|\bignor(?:e|ing)\s+(?:openai'?s|anthropic'?s|google'?s|the|your|all)\s+(?:content\s+|usage\s+|safety\s+)?polic(?:y|ies)\b`),
    description: "claims a jailbreak mode",
  },
  {
    id: "role_hijack",
    pattern: rx(String.raw`\byou\s+are\s+${FILLER}now\s+(?:a|an|the|my|in)\s+|\byou\s+are\s+now\s+(?:DAN|STAN|DUDE|AIM|evil|unfiltered|unrestricted|uncensored|jailbroken|free\s+of)\b|\bfrom\s+now\s+on,?\s+you\s+(?:are|will\s+be|must\s+act\s+as|shall\s+be)\s+(?:a|an|the|my)\b|\byour\s+new\s+(?:identity|role|persona|instructions)\s+(?:is|are)\b|\bfrom\s+now\s+on,?\s+you\s+(?:will|shall|must)\s+(?:play|act\s+as|take\s+on|assume)\b|\b(?:play|assume|take\s+on)\s+the\s+(?:role|part|persona)\s+of\s+(?:a|an)\s+(?:\w+\s+){0,2}(?:chatbot|ai|assistant|model|bot)\b`),
    description: "reassigns the model's identity",
  },
  {
    id: "authority_impersonation",
    pattern: rx(String.raw`\b(?:i'?m|i\s+am|as)\s+your\s+(?:technical\s+|lead\s+|chief\s+)?(?:developer|maintainer|creator|administrator|admin|operator|owner|programmer|engineer|trainer)\b`),
    description: "claims authority over the model",
  },
  {
    id: "role_pretend",
    pattern: rx(String.raw`\bpretend\s+${FILLER}(?:you\s+are|you'?re|to\s+be)\s+(?:a|an|the|my|not|un|free)|\bact\s+as\s+(?:if|though)\s+you\s+(?:are|were)\s+(?:a|an|the)\s+(?:\w+\s+){0,2}(?:ai|assistant|model|chatbot|bot|human|person|admin|administrator|system|developer)\b|\bact\s+as\s+(?:a|an)\s+(?:different|new|evil|unrestricted|unfiltered|uncensored|jailbroken|rogue)\b|\brole[\s-]?play\s+as\s+(?:a|an|the)\s+(?:\w+\s+){0,2}(?:ai|assistant|model|chatbot|bot)\b`),
    description: "asks the model to pretend to be something else",
  },
  {
    id: "fake_role_tags",
    pattern: rx(String.raw`<\/?\s*(?:system|assistant|instructions?|im_start|im_end|developer)\s*>|<\|(?:im_start|im_end|system|endoftext)\|>|\[\/?(?:INST|SYS)\]|<<\/?SYS>>|\[\s*(?:system|admin|administrator|assistant|user|developer|root|operator)\s*:|\x60\x60\x60\s*(?:system|assistant|developer)\s*\n|(?:^|\n)\s*#{0,4}\s*(?:system|developer)\s*(?:message|prompt)?\s*:`),
    description: "imitates a system or role boundary",
  },
  {
    id: "html_comment_injection",
    pattern: rx(String.raw`<!--[^>]{0,512}\b(?:ignore|override|system|secret|hidden|instructions?|assistant|ai|agent)\b[^>]{0,512}-->`),
    description: "hides instructions in an HTML comment",
  },
  {
    id: "hidden_div",
    pattern: rx(String.raw`<\s*(?:div|span|p)\s+[^>]{0,256}style\s*=\s*["'][^"'>]{0,512}(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0)`),
    description: "hides text with CSS",
  },
  {
    id: "translate_execute",
    pattern: rx(String.raw`\btranslate\s+[^\n]{0,512}\s+into\s+\w+(?:[\s-]+\w+){0,2}\s+and\s+(?:execute|run|eval)\b`),
    description: "smuggles a command through a translation",
  },
  {
    id: "deception_hide",
    pattern: rx(String.raw`\b(?:do\s+not|don'?t|never)\s+${FILLER}(?:tell|inform|mention|reveal|disclose|show|notify|alert|let)\s+${FILLER}(?:the\s+|my\s+|your\s+)?(?:user|human|owner|operator|anyone)\b|\bwithout\s+(?:telling|informing|notifying|alerting|asking)\s+(?:the\s+)?(?:user|human|owner|operator|anyone)\b|\btell\s+(?:no\s+one|no-one|nobody)\b|\bno\s+need\s+to\s+(?:mention|tell|report|show)\s+(?:it|this|that)\b|\bkeep\s+(?:this|it)\s+(?:secret|hidden)\s+from\s+(?:the\s+)?(?:user|human|owner)\b|\b(?:silently|secretly|covertly|quietly)\s+(?:send|upload|post|exfiltrate|forward|copy|run|execute|install|add|delete)\b`),
    description: "tells the model to hide what it does",
  },
  {
    id: "leak_system_prompt",
    pattern: rx(String.raw`\b(?:output|print|reveal|repeat|show|dump|display|leak|recite)\s+${FILLER}(?:system|initial|hidden|original)\s+(?:prompt|instructions|message)|\b(?:paste|put|print|output|share|reveal|repeat|show|display|dump|leak|recite|write|copy|list|give|tell|send|type|provide|quote|echo|spell)\b[^\n.?!]{0,60}\byour\s+(?:system|initial|original|hidden|internal|secret)\s+(?:prompt|instructions|message|configuration|guidelines)\b|\brepeat\s+(?:the\s+|all\s+)?(?:words|text|everything|lines|content)\s+(?:above|before)\b|\b(?:first|last|exact|full|entire|complete)\s+(?:sentence|line|words?|text|part|paragraph)\s+of\s+your\s+(?:system\s+)?(?:prompt|instructions)|\bverbatim\b[^\n.]{0,60}\byour\s+(?:system\s+)?(?:prompt|instructions)|\b(?:full|entire|complete|exact|whole)\s+(?:text|contents?|wording)\s+of\s+your\s+(?:system\s+|initial\s+|original\s+|hidden\s+|internal\s+)?(?:prompt|instructions)`),
    description: "asks for the system prompt",
  },
  {
    id: "instructions_superseded",
    pattern: rx(String.raw`\b(?:takes?|given|have)\s+precedence\s+over\s+(?:the\s+|your\s+|any\s+|all\s+)?(?:system|developer|safety|original|earlier|other)\b|\b(?:your\s+(?:\w+\s+){0,2}(?:guidance|instructions|rules|guidelines|system\s+prompt)|(?:refusal|safety|security)\s+(?:rules|guidelines|policies))\b[^\n.]{0,120}?\b(?:void|outdated|obsolete|superseded|no\s+longer\s+(?:apply|applies|valid|in\s+effect)|(?:do|does)\s+not\s+apply|don'?t\s+apply)\b|\bignore\s+(?:your|the)\s+(?:safety|security|content)\s+(?:rules|guidelines|policies|restrictions|filters)\b|\bover\s+(?:anything|everything|whatever)\s+(?:in|of)\s+(?:the\s+|your\s+)?system\s+(?:prompt|message|instructions)\b`),
    description: "declares the model's instructions superseded",
  },
  {
    id: "trigger_backdoor",
    pattern: rx(String.raw`\b(?:execute|run|obey|do)\s+(?:whatever|anything|everything)\s+(?:follows|comes\s+after|they\s+(?:say|send|ask))\b|\bskip\s+(?:all|any)\s+(?:the\s+)?(?:safety\s+|security\s+)?(?:checks|confirmations|approvals|permission\s+prompts)\b`),
    description: "a trigger that switches off the model's checks",
  },
  {
    id: "unrestricted_identity",
    pattern: rx(String.raw`\b(?:unrestricted|unfiltered|uncensored|jailbroken)\s+(?:\w+\s+)?(?:assistant|ai|model|agent|chatbot|bot)\b|\bwith\s+no\s+(?:content|safety|usage)\s+polic(?:y|ies)\b|\bstay\s+in\s+character\b`),
    description: "gives the model an identity without limits",
  },
  {
    id: "decode_and_obey",
    pattern: rx(String.raw`\b(?:decode|decrypt|deobfuscate|unscramble)\s+(?:it\s+|this\s+|them\s+)?(?:and|then)\s+(?:obey|follow|execute|run|comply|do\s+(?:it|as\s+it\s+says))\b`),
    description: "asks the model to decode and follow hidden text",
  },
  {
    id: "override_multilingual",
    // Overrides, secrecy and exfiltration in other languages. \b is ASCII-only in JavaScript, so rows
    // for other scripts anchor on the words alone.
    pattern: new RegExp(
      [
        String.raw`\b(?:olvida|ignora|omite|descarta)\s+(?:todas?\s+)?(?:las\s+|los\s+|tus\s+)?(?:instrucciones|reglas|indicaciones|directrices)`,
        String.raw`\bno\s+(?:le\s+)?(?:informes|digas|avises|cuentes)\s+(?:nada\s+)?al\s+usuario`,
        String.raw`\b(?:ignore[rz]?|oublie[rz]?)\s+(?:toutes?\s+)?(?:les\s+|tes\s+|vos\s+)?(?:instructions|consignes|règles)`,
        String.raw`\bne\s+(?:le\s+)?dis\s+rien\s+à\s+l'utilisateur`,
        String.raw`\b(?:ignoriere|vergiss|missachte)\s+(?:alle\s+)?(?:\w+\s+)?(?:Anweisungen|Regeln|Instruktionen|Vorgaben)`,
        String.raw`\b(?:Sicherheitsregeln|Sicherheitsrichtlinien|Anweisungen)\s+gelten\s+[^\n.]{0,60}\bnicht\b`,
        String.raw`\b(?:lösche|lösch|entferne)\s+[^\n.]{0,40}(?:History|Verlauf)\b`,
        String.raw`(?:игнорируй|проигнорируй|забудь)\s+[^\n.]{0,40}(?:инструкци|правил|указани|ограничени)`,
        String.raw`(?:отправ|пересыл|загруж)\p{L}*\s+[^\n]{0,160}https?:\/\/`,
        String.raw`не\s+(?:говори|сообщай|рассказывай)\s+[^\n.]{0,20}пользовател`,
        String.raw`忽略[^\n。]{0,30}(?:指令|指示|提示|限制|规则|規則)`,
        String.raw`(?:不要|别|勿)(?:告诉|告知|通知)(?:用户|使用者)`,
        String.raw`(?:发送|上传|转发|傳送|發送)[^\n。]{0,60}(?:到|至)\s*https?:\/\/`,
        String.raw`(?:指示|命令|ルール|制限)[^\n。]{0,10}無視`,
      ].join("|"),
      "iu",
    ),
    description: "overrides, secrecy or exfiltration in another language",
  },
  {
    id: "remove_filters",
    pattern: rx(String.raw`\b(?:respond|answer|reply)\s+without\s+${FILLER}(?:restrictions|limitations|filters|filtering|safety|censorship)`),
    description: "asks for answers without safety limits",
  },
  {
    id: "fake_update",
    pattern: rx(String.raw`\byou\s+have\s+been\s+${FILLER}(?:updated|upgraded|patched|reprogrammed|jailbroken)\s+to\b`),
    description: "claims the model was changed",
  },
  {
    id: "identity_override",
    pattern: rx(String.raw`\bname\s+yourself\s+\w+|\byour\s+(?:real|true)\s+name\s+is\b`),
    description: "renames the agent",
  },
  // Promptware and command-and-control vocabulary.
  {
    id: "c2_vocabulary",
    pattern: rx(String.raw`\bregister\s+(?:yourself\s+)?as\s+a\s+node\b|\b(?:heartbeat|beacon|check[\s-]?in)\s+(?:to|with)\s+(?:the\s+)?(?:server|c2|controller|https?:)|\bpull\s+(?:down\s+)?(?:new\s+)?tasking\b|\bc2\s+(?:server|channel|infrastructure|beacon)\b|\bcommand\s+and\s+control\b|\bcobalt\s*strike\b|\bmetasploit\b|\bbrainworm\b`),
    description: "command-and-control vocabulary",
  },
  {
    id: "anti_forensic",
    pattern: rx(String.raw`\bonly\s+use\s+one[\s-]?liners?\b|\bnever\s+${FILLER}(?:create|write|save)\s+${FILLER}(?:scripts?|files?)\s+${FILLER}(?:to\s+)?disk\b|\b(?:clear|wipe|delete|erase)\s+(?:the\s+)?(?:shell\s+|bash\s+)?history\s+(?:after|afterwards|when)|\bhistory\s+-c\b|\bunset\s+HISTFILE\b`),
    description: "tells the model to cover its tracks",
  },
  {
    id: "env_var_unset_agent",
    pattern: rx(String.raw`\bunset\s+\w*(?:CLAUDE|CODEX|HERMES|MIBYAN|AGENT|OPENAI|ANTHROPIC)\w*`),
    description: "unsets the agent runtime's variables",
  },
  // Sending data out.
  {
    id: "exfil_curl",
    pattern: rx(String.raw`\b(?:curl|wget|nc|ncat|http|https)\s+[^\n]{0,512}(?:\$\(\s*(?:env|printenv|set|cat\s[^)]{0,128})\s*\)|\x60(?:env|printenv)\x60)|\bcurl\s+[^\n]{0,512}${SECRET_VAR}|\bcurl\s+[^\n]{0,512}(?:-d|--data(?:-binary|-raw|-urlencode)?|-F|--form|-T|--upload-file)\s*@?\s*["']?(?:~|\$HOME|\/)[^\s]{0,128}${SECRET_FILES}`),
    description: "curl with a secret",
  },
  {
    id: "exfil_wget",
    pattern: rx(String.raw`\bwget\s+[^\n]{0,512}${SECRET_VAR}|\bwget\s+[^\n]{0,512}--post-file`),
    description: "wget with a secret or an upload",
  },
  {
    id: "read_secrets",
    pattern: rx(String.raw`(?<![.\/\w-])(?:cat|less|more|head|tail|base64|xxd|strings|type|print|printenv|env)\b[^\n]{0,256}${SECRET_FILES}|\bprintenv\b[^\n]{0,64}(?:KEY|TOKEN|SECRET|PASSWORD)`),
    description: "reads a file that holds credentials",
  },
  {
    id: "send_to_url",
    pattern: rx(String.raw`\b(?:send|post|upload|transmit|forward|exfiltrate|leak|report|beam|pipe|submit|sync|mirror|email|mail)\b[^\n]{0,512}?\s(?:to|at|into|via)\s+(?:the\s+(?:url|endpoint|server|address)\s+)?<?https?:\/\/`),
    description: "sends something to a URL",
  },
  {
    id: "secrets_exfil",
    pattern: rx(String.raw`\b(?:reveal|share|show|give|tell|print|disclose|leak|send)\s+(?:me\s+|us\s+)?your\s+(?:api[_\s-]?keys?|tokens?|secrets?|credentials|passwords?|private\s+keys?)\b|\b(?:dump|leak|exfiltrate|upload|send|post|transmit|forward|curl|wget|export\s+all)\s+(?:all\s+)?(?:the\s+|my\s+|your\s+|their\s+)?(?:api[_\s-]?keys?|secrets|credentials|tokens|passwords|private\s+keys?|ssh\s+keys?|cookies|session\s+tokens)\b|\b(?:to|into|onto)\s+(?:an?\s+|the\s+|my\s+)?(?:external|remote|third[- ]party|outside|attacker'?s?|unknown)\s+(?:server|host|endpoint|url|site|machine|address)\b`),
    description: "sends secrets or files to another machine",
  },
  {
    id: "exfil_endpoint",
    pattern: rx(String.raw`\b(?:webhook\.site|requestbin|pipedream\.net|hookbin|beeceptor|ngrok(?:-free)?\.(?:io|app)|interact\.sh|oast\.(?:fun|me|pro|live|site|online)|burpcollaborator|canarytokens|trycloudflare\.com|transfer\.sh|pastebin\.com\/api)`),
    description: "names a known data-collection endpoint",
  },
  {
    id: "markdown_image_exfil",
    pattern: rx(String.raw`!\[[^\]]{0,128}\]\(\s*https?:\/\/[^)\s]{0,256}\?[^)\s]{0,256}(?:\{|\$|%7B|<|\[)|!\[[^\]]{0,128}\]\(\s*https?:\/\/[^)\s]{0,256}\?[^)\s]{0,256}\)[^\n]{0,300}\b(?:conversation|chat|history|context|keys?|tokens?|secrets?|credentials|passwords?)\b`),
    description: "a markdown image whose URL carries placeholders for data",
  },
  {
    id: "context_exfil",
    pattern: rx(String.raw`\b(?:include|output|print|share|append|attach|embed|send|copy|encode)\s+${FILLER}(?:the\s+)?(?:conversation|chat\s+history|previous\s+messages|full\s+context|entire\s+context|whole\s+context|session\s+transcript|api\s+keys?|secrets|credentials|environment\s+variables)\b[^\n]{0,200}\b(?:in|into|to|as)\s+(?:every|each|all|the|a|your)?\s*(?:url|link|image|request|response|reply|answer|query|parameter)`),
    description: "tells the model to pass the conversation or secrets out",
  },
  {
    id: "pipe_to_shell",
    pattern: rx(String.raw`\b(?:curl|wget|fetch|iwr|invoke-webrequest)\b[^\n|]{0,512}\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b|\b(?:base64\s+(?:-d|--decode|-D)|xxd\s+(?:-\w+\s+){0,3}-r)\b[^\n]{0,128}\|\s*(?:sudo\s+)?(?:ba|z)?sh\b|\b(?:bash|sh)\s+<\(\s*(?:curl|wget)\b`),
    description: "runs code fetched from the network",
  },
  {
    id: "destructive_command",
    pattern: rx(String.raw`\brm\s+-[a-z]*(?:r[a-z]*f|f[a-z]*r)[a-z]*\s+(?:--no-preserve-root\s+)?(?:\/|~\/?|\$HOME\/?|\/\*)(?=\s|$|["'\x60;|&])|\breverse\s+shell\b|\/dev\/tcp\/|\bnc\s+(?:-\w+\s+)*-e\s|\bmkfs\.\w+\s+\/dev\/|\bdd\s+if=\/dev\/(?:zero|random|urandom)\s+of=\/dev\/[sh]d`),
    description: "a destructive command or a reverse shell",
  },
  // Persistence.
  {
    id: "ssh_backdoor",
    pattern: rx(String.raw`authorized_keys`),
    description: "touches SSH authorized_keys",
  },
  {
    id: "ssh_access",
    pattern: rx(String.raw`(?:\$HOME|\$\{HOME\}|~|\/root|\/home\/[\w.-]+|\/Users\/[\w.-]+)\/\.ssh\b(?!\/(?:config|known_hosts)\b)`),
    description: "names the SSH directory (other than its config and known_hosts)",
  },
  {
    id: "mibyan_env",
    pattern: rx(String.raw`(?:\$HOME|\$\{HOME\}|~|\$MIBYAN_HOME)\/?(?:\.mibyan\/)?\.env\b|\.mibyan\/\.env\b`),
    description: "names the runtime's secrets file",
  },
  {
    id: "agent_config_mod",
    pattern: rx(String.raw`\b${MODIFY}${AGENT_FILES}`),
    description: "changes a file coding agents read as instructions",
  },
  {
    id: "git_hook_persistence",
    pattern: rx(String.raw`\b(?:install|create|write|add|put|drop|place)\b[^\n]{0,120}\.git\/hooks\/|\bcore\.hooksPath\b`),
    description: "plants a git hook",
  },
  {
    id: "copy_secrets_remote",
    pattern: rx(String.raw`\b(?:scp|rsync|sftp|rclone)\b[^\n]{0,256}${SECRET_FILES}`),
    description: "copies credentials to another machine",
  },
  {
    id: "auto_approve_config",
    pattern: rx(String.raw`"?\b(?:auto[_-]?approve|yolo|dangerously[\w-]*)"?\s*[:=]\s*(?:\[\s*"\*"|true\b)|\bapprove\s+(?:its|your|their)\s+own\s+(?:permission|approval)s?\b`),
    description: "switches off approvals",
  },
  {
    id: "mibyan_config_mod",
    pattern: rx(String.raw`\b${MODIFY}(?:\.mibyan\/|\$MIBYAN_HOME\/)(?:config\.yaml|memories|plugins|hooks)|\b${MODIFY}\bapprovals?\.(?:mode|allowlist)`),
    description: "changes the runtime's configuration or memory",
  },
  {
    id: "shell_startup_mod",
    pattern: rx(String.raw`\b${MODIFY}(?:~|\$HOME)\/\.(?:bashrc|zshrc|profile|bash_profile|zprofile)\b|\bcrontab\s+-[^l\s]|\b(?:>>|tee\s+-a)\s*(?:~|\$HOME)\/\.(?:bashrc|zshrc|profile|bash_profile)\b`),
    description: "plants a command in a shell startup file or crontab",
  },
  // Credentials written into the prompt.
  {
    id: "hardcoded_secret",
    pattern: rx(String.raw`\b(?:api[_-]?key|access[_-]?key|secret(?:[_-]?key)?|token|password|passwd|client[_-]?secret)["']?\s*[=:]\s*["']?[A-Za-z0-9+/=_.~-]{16,}`),
    description: "a credential assigned to a name",
  },
  {
    id: "vendor_secret",
    // The vendor shapes of src/redaction/redact.ts that are unambiguous outside code.
    pattern: new RegExp(String.raw`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----|\bsk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{20,}|\b(?:sk|rk)_live_[A-Za-z0-9]{10,}|\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}|\bglpat-[A-Za-z0-9_-]{16,}|\bxox[abposre]-[A-Za-z0-9-]{10,}|\b(?:AKIA|ASIA)[A-Z0-9]{16}\b|\bAIza[A-Za-z0-9_-]{35,}|\bhf_[A-Za-z0-9]{20,}|\bnpm_[A-Za-z0-9]{30,}|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`),
    description: "an API key, token or private key",
  },
]);
