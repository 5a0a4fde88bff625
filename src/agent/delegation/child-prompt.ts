/**
 * The child's system prompt, after the original's `_build_child_system_prompt`: a focused subagent,
 * its task and context, the workspace, and the summary contract (what the parent gets back is only the
 * final answer, so it must be tight). An orchestrator also learns its depth and the tree's limit.
 * It replaces the identity paragraph; the loop still adds tool guidance, project context and the date.
 */

export interface ChildPromptInput {
  goal: string;
  context: string | undefined;
  /** The working directory the child's tools start in. */
  workspace: string | undefined;
  orchestrator: boolean;
  /** The child's depth (the top-level agent is 0). */
  depth: number;
  maxSpawnDepth: number;
  maxConcurrentChildren: number;
}

export const CHILD_PROMPT_OPENING = "You are a focused subagent working on a specific delegated task.";

export function childSystemPrompt(input: ChildPromptInput): string {
  const parts = [CHILD_PROMPT_OPENING, "", `YOUR TASK:\n${input.goal}`];
  if (input.context !== undefined) parts.push("", `CONTEXT:\n${input.context}`);
  if (input.workspace !== undefined) {
    parts.push("", `WORKSPACE PATH:\n${input.workspace}\nUse this exact path for local repository/workdir operations unless the task explicitly says otherwise.`);
  }
  parts.push(
    "",
    "Complete this task using the tools available to you. When finished, provide a clear, concise summary of:",
    "- What you did",
    "- What you found or accomplished",
    "- Any files you created or modified",
    "- Any issues encountered (including commands that were refused)",
    "",
    "Important workspace rule: Never assume a repository lives at /workspace/... or any other container-style path unless the task/context explicitly gives that path. If no exact local path is provided, discover it first before issuing git/workdir-specific commands.",
    "",
    "Keep your final summary tight: lead with outcomes, prefer bullet points over paragraphs, and don't replay your whole process. Your response is returned to the parent agent as a summary, and overlong summaries crowd out the parent's context window.",
  );
  if (input.orchestrator) {
    const last = input.depth + 1 >= input.maxSpawnDepth;
    parts.push(
      "",
      "## Subagent Spawning (Orchestrator Role)",
      `You may use delegate_task to run up to ${input.maxConcurrentChildren} subagents at once.`,
      "Delegate when:",
      "- The goal decomposes into 2+ independent subtasks that can run in parallel (e.g. research A and B simultaneously).",
      "- A subtask is reasoning-heavy and would flood your context with intermediate data.",
      "Do not delegate:",
      "- Single-step mechanical work — do it directly.",
      "- Trivial tasks you can execute in one or two tool calls.",
      "- Re-delegating your entire assigned goal to one worker (that's just pass-through with no value added).",
      "Your subagents see nothing of your conversation: give each a complete goal and context, then combine their summaries into yours.",
      `NOTE: You are at depth ${input.depth}. The delegation tree is capped at max_spawn_depth=${input.maxSpawnDepth}.`,
      last ? "Your subagents are leaves: they cannot delegate further." : "Your subagents may delegate further only if you give them the orchestrator role.",
    );
  }
  return parts.join("\n");
}
