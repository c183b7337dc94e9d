// reconcile.mjs runs Qwen Code 0.24.4's own reconcileDanglingPromptTerminals
// over scenarios read as JSONL on stdin and prints one JSON result per line.
//
// Input line:  {"id", "sessionId", "cwd", "ledger": string, "transcript": string|null}
// Output line: {"id", "appended": <record>|null, "sealed": bool,
//               "ledgerPath", "transcriptPath" (relative to the runtime dir),
//               "error"?: string}
//
// The package's own SessionService decides where the files go, so the Go side
// can check that its layout agrees. The package is found through
// TAILPROOF_QWEN_PKG, else the tailproof cache dir, else /tmp/qwenref.
import { existsSync, readdirSync, readFileSync, writeFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import * as os from 'node:os';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

function locatePackage() {
  const candidates = [];
  if (process.env.TAILPROOF_QWEN_PKG) candidates.push(process.env.TAILPROOF_QWEN_PKG);
  const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  candidates.push(path.join(cache, 'tailproof', 'qwen-code-0.24.4', 'node_modules', '@qwen-code', 'qwen-code'));
  candidates.push('/tmp/qwenref/node_modules/@qwen-code/qwen-code');
  for (const c of candidates) {
    if (existsSync(path.join(c, 'chunks'))) return c;
  }
  throw new Error(`reconcile.mjs: @qwen-code/qwen-code not found (tried ${candidates.join(', ')}); run simulations/conformance/install.sh or set TAILPROOF_QWEN_PKG`);
}

// The chunk names are content hashes, so follow the bundle's own imports:
// the prompt-terminal-ledger entry names the chunk holding the reconciler,
// and that chunk names the one holding SessionService.
function importFrom(source, name) {
  const re = /import\s*\{([^}]*)\}\s*from\s*"(\.\/chunk-[A-Z0-9]+\.js)"/g;
  for (const m of source.matchAll(re)) {
    const names = m[1].split(',').map((s) => s.trim());
    if (names.includes(name)) return m[2];
  }
  return undefined;
}

async function loadReference(pkg) {
  const chunks = path.join(pkg, 'chunks');
  const entry = readdirSync(chunks).find((f) => /^prompt-terminal-ledger-[A-Z0-9]+\.js$/.test(f));
  if (!entry) throw new Error(`reconcile.mjs: no prompt-terminal-ledger chunk in ${chunks}`);
  const ledgerChunk = importFrom(readFileSync(path.join(chunks, entry), 'utf8'), 'reconcileDanglingPromptTerminals');
  if (!ledgerChunk) throw new Error(`reconcile.mjs: ${entry} does not import reconcileDanglingPromptTerminals`);
  const serviceChunk = importFrom(readFileSync(path.join(chunks, ledgerChunk), 'utf8'), 'SessionService');
  if (!serviceChunk) throw new Error(`reconcile.mjs: ${ledgerChunk} does not import SessionService`);
  const ledgerMod = await import(pathToFileURL(path.join(chunks, ledgerChunk)).href);
  const serviceMod = await import(pathToFileURL(path.join(chunks, serviceChunk)).href);
  const version = JSON.parse(readFileSync(path.join(pkg, 'package.json'), 'utf8')).version;
  return { reconcile: ledgerMod.reconcileDanglingPromptTerminals, SessionService: serviceMod.SessionService, version };
}

async function main() {
  // The bundle logs through console; keep stdout for results only.
  const out = process.stdout;
  console.log = console.info = console.debug = console.warn = (...a) => process.stderr.write(a.join(' ') + '\n');
  const pkg = locatePackage();
  const ref = await loadReference(pkg);
  out.write(JSON.stringify({ hello: true, version: ref.version, pkg }) + '\n');
  // One runtime dir for the whole batch: each scenario's files are removed
  // after it runs (directory churn dominated the run time otherwise).
  const root = mkdtempSync(path.join(process.env.TAILPROOF_SCRATCH || os.tmpdir(), 'tailproof-conformance-'));
  try {
    const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
    for await (const line of rl) {
      if (line.length === 0) continue;
      let sc;
      try {
        sc = JSON.parse(line);
      } catch (e) {
        out.write(JSON.stringify({ id: null, error: `bad scenario line: ${e.message}` }) + '\n');
        continue;
      }
      out.write(JSON.stringify(await runOne(ref, root, sc)) + '\n');
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

async function runOne(ref, runtimeBaseDir, sc) {
  const res = { id: sc.id, appended: null, sealed: false };
  try {
    const service = new ref.SessionService(sc.cwd, { runtimeBaseDir });
    const ledgerPath = service.getPromptLedgerPath(sc.sessionId);
    const transcriptPath = service.getSessionTranscriptPath(sc.sessionId);
    res.ledgerPath = path.relative(runtimeBaseDir, ledgerPath);
    res.transcriptPath = path.relative(runtimeBaseDir, transcriptPath);
    mkdirSync(path.dirname(ledgerPath), { recursive: true });
    const before = Buffer.from(sc.ledger, 'utf8');
    writeFileSync(ledgerPath, before);
    if (sc.transcript !== null && sc.transcript !== undefined) {
      mkdirSync(path.dirname(transcriptPath), { recursive: true });
      writeFileSync(transcriptPath, sc.transcript, 'utf8');
    }
    await ref.reconcile(service, sc.sessionId);
    const after = readFileSync(ledgerPath);
    if (!after.subarray(0, before.length).equals(before)) {
      res.error = 'ledger prefix changed';
      return res;
    }
    let added = after.subarray(before.length).toString('utf8');
    if (added.length > 0) {
      if (before.length > 0 && before[before.length - 1] !== 10 && added.startsWith('\n')) {
        res.sealed = true;
        added = added.slice(1);
      }
      const lines = added.split('\n').filter((l) => l.length > 0);
      if (lines.length !== 1 || !added.endsWith('\n')) {
        res.error = `unexpected ledger growth ${JSON.stringify(added)}`;
        return res;
      }
      res.appended = JSON.parse(lines[0]);
      res.line = lines[0];
    }
  } catch (e) {
    res.error = String(e && e.stack ? e.stack : e);
  } finally {
    for (const p of [res.ledgerPath, res.transcriptPath]) {
      if (p) rmSync(path.join(runtimeBaseDir, p), { force: true });
    }
  }
  return res;
}

main().catch((e) => {
  process.stderr.write(String(e && e.message ? e.message : e) + '\n');
  process.exit(2);
});
