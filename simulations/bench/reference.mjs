// Runs Qwen Code 0.24.4's own reconcileDanglingPromptTerminals on a session in
// its runtime layout, for the benchmark next to `tailproof reconcile`.
//   node reference.mjs PKG_DIR RUNTIME_DIR CWD SESSION_ID
import { readdirSync } from "node:fs";
import { join } from "node:path";
const [pkg, runtimeDir, cwd, sessionId] = process.argv.slice(2);
const chunks = join(pkg, "chunks");
const ledgerChunk = readdirSync(chunks).find((f) => f.startsWith("prompt-terminal-ledger-"));
const { reconcileDanglingPromptTerminals } = await import(join(chunks, ledgerChunk));
// SessionService is exported by the core chunk the ledger chunk imports from.
let SessionService;
for (const f of readdirSync(chunks)) {
  if (!f.endsWith(".js")) continue;
  const src = (await import("node:fs")).readFileSync(join(chunks, f), "utf8");
  if (/export\s*\{[^}]*\bSessionService\b/.test(src)) {
    ({ SessionService } = await import(join(chunks, f)));
    if (SessionService) break;
  }
}
const service = new SessionService(cwd, { runtimeBaseDir: runtimeDir });
const t0 = performance.now();
await reconcileDanglingPromptTerminals(service, sessionId);
console.log(`reference reconcile: ${(performance.now() - t0).toFixed(0)} ms`);
