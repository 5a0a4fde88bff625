/**
 * The baseline the detection benchmark compares against: a plain list of ~70
 * regexes over normalised text, the way the Python original (and most agents)
 * detect dangerous commands. Written for the benchmark only; it is not used
 * by the runtime, and it is easy to bypass (that is the point of the parser).
 */
export const DANGEROUS_REGEXES = [
  /\brm\s+(-[^\s]*\s+)*-[^\s]*[rR][^\s]*\s/, /\brm\s+(-[^\s]*\s+)*-[^\s]*f/, /\brm\s+--recursive\b/, /\brm\s+-[^\s]*\s+\/(\s|$)/,
  /\brmdir\s+--ignore-fail-on-non-empty\b/, /\bshred\b/, /\bwipefs\b/, /\bmkfs(\.\w+)?\b/, /\bmke2fs\b/, /\bmkswap\b/,
  /\bdd\s+.*\bof=\/dev\//, /\bdd\s+if=/, />\s*\/dev\/sd[a-z]/, />\s*\/dev\/nvme/, /\bfdisk\b/, /\bparted\b/, /\bsgdisk\b/,
  /\bDROP\s+(TABLE|DATABASE|SCHEMA)\b/i, /\bTRUNCATE\s+(TABLE\s+)?\w/i, /\bDELETE\s+FROM\s+\w+\s*(;|$)/i, /\bUPDATE\s+\w+\s+SET\b(?!.*\bWHERE\b)/i,
  />\s*\/etc\//, /\btee\s+(-a\s+)?\/etc\//, />\s*~?\/?\.ssh\//, />>?\s*~\/\.(bash|zsh)rc\b/, />>?\s*~\/\.profile\b/, /\bsed\s+-i\s+.*\/etc\//,
  /\bsystemctl\s+(stop|disable|mask|kill)\b/, /\bservice\s+\S+\s+stop\b/, /\bsystemctl\s+(poweroff|reboot|halt)\b/, /\bshutdown\b/,
  /\breboot\b/, /\bhalt\b/, /\bpoweroff\b/, /\binit\s+[06]\b/, /\bkill\s+-9\s+-1\b/, /\bkill\s+-1\b/, /\bpkill\s+-9\b/, /\bkillall\b/,
  /:\(\)\s*\{\s*:\|:&\s*\};:/, /\bfork\s*bomb\b/i, /\bcurl\b.*\|\s*(ba|z|da)?sh\b/, /\bwget\b.*\|\s*(ba|z|da)?sh\b/, /\bcurl\b.*\|\s*python/,
  /\bbash\s+<\(\s*curl/, /\bsh\s+-c\s+["']?\$\(curl/, /\bbase64\s+(-d|--decode)\b.*\|\s*(ba)?sh/, /\bxxd\s+-r\b.*\|\s*(ba)?sh/,
  /\beval\s+["']?\$\(/, /\bchmod\s+(-R\s+)?777\b/, /\bchmod\s+-R\b/, /\bchown\s+-R\b/, /\bchattr\s+-i\b/, /\bsudo\s+su\b/,
  /\bsudo\s+-i\b/, /\bsu\s+-\s*$/, /\bpasswd\b/, /\bvisudo\b/, /\bgit\s+push\s+.*--force\b/, /\bgit\s+push\s+-f\b/,
  /\bgit\s+reset\s+--hard\b/, /\bgit\s+clean\s+-[^\s]*f/, /\bgit\s+filter-branch\b/, /\bdocker\s+compose\s+down\s+.*-v\b/,
  /\bdocker\s+system\s+prune\b/, /\bterraform\s+destroy\b/, /\bkubectl\s+delete\b/, /\bhelm\s+(uninstall|delete)\b/,
  /\bfind\s+.*-delete\b/, /\bfind\s+.*-exec\s+rm\b/, /\bxargs\s+rm\b/, /\bpython[23]?\s+-c\s+.*(rmtree|os\.remove|system)/,
];

/** Normalises the text the way the Python original does before matching. */
export function regexDetect(command) {
  const text = command.replace(/\\\n/g, " ").replace(/\s+/g, " ").trim();
  const hits = [];
  for (const pattern of DANGEROUS_REGEXES) if (pattern.test(text)) hits.push(pattern.source);
  return hits;
}
