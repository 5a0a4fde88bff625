#!/usr/bin/env node
// Copies the bash grammar (tree-sitter-bash's prebuilt wasm, and its licence) into grammar/, which the
// package ships. Users then install neither tree-sitter-bash (20 MB: C sources, native prebuilds and a
// node-gyp install script the runtime never runs) nor a C toolchain where no prebuild fits; the
// grammar's version is the devDependency pinned in package-lock.json. Part of `npm run build`.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const source = path.dirname(require.resolve("tree-sitter-bash/package.json"));
const { version } = JSON.parse(readFileSync(path.join(source, "package.json"), "utf8"));
const target = path.join(root, "grammar");
mkdirSync(target, { recursive: true });
copyFileSync(path.join(source, "tree-sitter-bash.wasm"), path.join(target, "tree-sitter-bash.wasm"));
copyFileSync(path.join(source, "LICENSE"), path.join(target, "LICENSE-tree-sitter-bash"));
writeFileSync(path.join(target, "VERSION"), `tree-sitter-bash ${version}\n`);
