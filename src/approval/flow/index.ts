/**
 * The approval flow: the gate every dangerous-command check goes through, its surfaces
 * (terminal prompt, gateway, non-interactive), the smart reviewer, the persisted
 * allowlist and the redaction used in its logs. See docs/approvals.md.
 */

export { ApprovalGate, type ApprovalGateOptions, type DetectFn } from "./gate.js";
export { ISOLATED_BACKENDS, isIsolatedBackend } from "./backends.js";
export { actionDetection, actionDisplay, actionMatch, MAX_ACTION_DISPLAY_CHARS } from "./action.js";
export type {
  ActionRule,
  ApprovalAnswer,
  ApprovalEntry,
  ApprovalKey,
  ApprovalMode,
  ApprovalObserver,
  ApprovalRequest,
  ApprovalScope,
  ApprovalSurface,
  BackendInfo,
  CallApprovalScope,
  CheckOptions,
  DecisionSource,
  GateAction,
  GateDecision,
  SmartReviewInput,
  SmartReviewer,
  SmartVerdict,
} from "./types.js";
export {
  addApprovals,
  ConfigAllowlist,
  DEFAULT_ALLOWLIST_BACKEND,
  listApprovals,
  MemoryAllowlist,
  revokeApproval,
  type AllowlistFileOptions,
  type AllowlistStore,
} from "./allowlist.js";
export { editConfigFile } from "../../config/edit-config-file.js";
export { writeFileAtomic } from "../../util/atomic-file.js";
export { findDenyRule, matchesPrefixPattern, type DenyRule, type DenyRuleHit } from "./deny-rules.js";
export { approvalId, commandHash, keyOf, keysOf } from "./keys.js";
export { containsSecret, REDACTED, redactSecrets } from "../../redaction/redact.js";
export {
  approvalSettingsFromConfig,
  defaultApprovalSettings,
  SMART_ENV,
  type ApprovalSettings,
  type SmartSettings,
} from "./settings.js";
export { GatewaySurface, type GatewayAnswer, type GatewaySurfaceOptions, type ResolveResult, type ResolveStatus } from "../surfaces/gateway.js";
export {
  FilePendingStore,
  MemoryPendingStore,
  parsePendingApproval,
  pendingStoreDir,
  type PendingApproval,
  type PendingApprovalStore,
  type PendingMatch,
  type PendingRecord,
  type PendingResolution,
} from "../surfaces/pending-store.js";
export { NonInteractiveSurface, type NonInteractivePolicy } from "../surfaces/non-interactive.js";
export { SubagentSurface } from "../surfaces/subagent.js";
export { hasInteractiveTerminal, parseChoice, PROMPT_TEXT, TerminalSurface, type TerminalSurfaceOptions } from "../surfaces/terminal.js";
export { renderRequest, visible } from "../surfaces/display.js";
export { buildReviewPrompt, OpenAISmartReviewer, parseVerdict, type OpenAIReviewerOptions } from "../smart/reviewer.js";
export { stripShellComments } from "../smart/strip-comments.js";
