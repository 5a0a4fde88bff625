/** The memory store: the interface the agent loop sees, the file implementation, the format and the threat scan. */

export { ENTRY_DELIMITER, MEMORY_FILE_NAMES, MEMORY_TARGETS, parseEntries, roundTripProblem, serializeEntries, type MemoryTarget } from "./entries.js";
export type { MemoryLimits, MemoryOperation, MemoryResult, MemoryResultBody, MemorySnapshot, MemoryStore } from "./memory-store.js";
export { DEFAULT_MEMORY_CHAR_LIMIT, DEFAULT_USER_CHAR_LIMIT, FileMemoryStore, memoryStoreOptionsFromConfig, type FileMemoryStoreOptions } from "./file-memory-store.js";
export { MAX_MEMORY_FILE_BYTES, MemoryFileError, memoriesDir, memoryFilePath, type MemoryFileProblem } from "./memory-files.js";
export { MEMORY_BLOCK_RULE, renderMemoryBlock } from "./memory-prompt.js";
export { firstThreatMessage, MAX_SCAN_CHARS, normalizeForScan, scanForThreats, type ThreatFinding } from "./threat-scan.js";
export { THREAT_PATTERNS, type ThreatPattern } from "./threat-patterns.js";
