#!/usr/bin/env python3
"""Ask the released Codex CLI how it reads odd rollout lines (ADR 0048).

Each case is a rollout (session_meta, task_started, a user_message, then the
line under test, which would end turn t1). The script writes it under a
throwaway CODEX_HOME, starts `codex app-server` (stdio JSON-RPC; no network,
no login needed), calls thread/read with includeTurns, and prints the turns
Codex built: their status and items. A line Codex skips leaves t1
"interrupted"; a line it reads as task_complete leaves it "completed".

Install once (about 170 MB):
  mkdir -p ~/.cache/tailproof/codex-0.171.0 && cd ~/.cache/tailproof/codex-0.171.0 &&
  npm pack @openai/codex@0.171.0-linux-x64 && tar xzf openai-codex-0.171.0-linux-x64.tgz
Run: python3 simulations/conformance/codex/probe.py [CODEX_BINARY]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

CODEX = os.path.expanduser(
    "~/.cache/tailproof/codex-0.171.0/package/vendor/x86_64-unknown-linux-musl/bin/codex")
TID = "019ae000-0000-7000-8000-000000000001"
META = ('{"timestamp":"2026-12-02T10:00:00.000Z","type":"session_meta","payload":{"id":"%s",'
        '"timestamp":"2026-12-02T10:00:00.000Z","cwd":"/tmp","originator":"codex_cli_rs",'
        '"cli_version":"0.171.0","source":"cli"}}' % TID)
START = '{"timestamp":"2026-12-02T10:00:01.000Z","type":"event_msg","payload":{"type":"task_started","turn_id":"t1"}}'
USER = '{"timestamp":"2026-12-02T10:00:01.100Z","type":"event_msg","payload":{"type":"user_message","message":"hello"}}'
TS = '"timestamp":"2026-12-02T10:00:02.000Z"'
END = ',"type":"event_msg","payload":{"type":"task_complete","turn_id":"t1"}}'

# name -> the lines after session_meta and task_started
CASES = {
    "control, no end": [USER],
    "control, task_complete": [USER, "{" + TS + END],
    "payload twice, last untyped": [USER, '{' + TS + ',"type":"event_msg","payload":{"type":"task_complete","turn_id":"t1"},"payload":{"turn_id":"t1"}}'],
    "payload twice, last task_complete": [USER, '{' + TS + ',"type":"event_msg","payload":{"type":"agent_message","message":"x"},"payload":{"type":"task_complete","turn_id":"t1"}}'],
    "payload twice, last null": [USER, '{' + TS + ',"type":"event_msg","payload":{"type":"task_complete","turn_id":"t1"},"payload":null}'],
    "type twice, last event_msg": [USER, '{' + TS + ',"type":"response_item","payload":{"type":"task_complete","turn_id":"t1"},"type":"event_msg"}'],
    "timestamp twice, last a string": [USER, '{"timestamp":5,' + TS + END],
    "message twice": ['{' + TS + ',"type":"event_msg","payload":{"type":"user_message","message":"first","message":"second"}}'],
    "message twice, last null": ['{' + TS + ',"type":"event_msg","payload":{"type":"user_message","message":"first","message":null}}'],
    "payload type twice": ['{' + TS + ',"type":"event_msg","payload":{"type":"user_message","message":"a","type":"agent_message"}}'],
    "turn_id twice, last null": [USER, '{' + TS + ',"type":"event_msg","payload":{"type":"task_complete","turn_id":"t1","turn_id":null}}'],
    "task_complete without turn_id": [USER, '{' + TS + ',"type":"event_msg","payload":{"type":"task_complete"}}'],
    "task_complete, turn_id a number": [USER, '{' + TS + ',"type":"event_msg","payload":{"type":"task_complete","turn_id":1}}'],
    "turn_complete alias": [USER, '{' + TS + ',"type":"event_msg","payload":{"type":"turn_complete","turn_id":"t1"}}'],
    "turn_aborted without turn_id": [USER, '{' + TS + ',"type":"event_msg","payload":{"type":"turn_aborted","reason":"interrupted"}}'],
    "turn_aborted without reason": [USER, '{' + TS + ',"type":"event_msg","payload":{"type":"turn_aborted","turn_id":"t1"}}'],
    "turn_aborted, unknown reason": [USER, '{' + TS + ',"type":"event_msg","payload":{"type":"turn_aborted","turn_id":"t1","reason":"bored"}}'],
    "task_started without turn_id, then user": ['{"timestamp":"2026-12-02T10:00:01.500Z","type":"event_msg","payload":{"type":"task_started"}}', '{"timestamp":"2026-12-02T10:00:01.600Z","type":"event_msg","payload":{"type":"user_message","message":"second turn?"}}'],
    "ordinal a string": [USER, '{' + TS + ',"ordinal":"x"' + END],
    "ordinal -1": [USER, '{' + TS + ',"ordinal":-1' + END],
    "ordinal -0": [USER, '{' + TS + ',"ordinal":-0' + END],
    "ordinal 1.0": [USER, '{' + TS + ',"ordinal":1.0' + END],
    "ordinal 1e2": [USER, '{' + TS + ',"ordinal":1e2' + END],
    "ordinal 2^63": [USER, '{' + TS + ',"ordinal":9223372036854775808' + END],
    "ordinal 2^64": [USER, '{' + TS + ',"ordinal":18446744073709551616' + END],
    "ordinal null": [USER, '{' + TS + ',"ordinal":null' + END],
    "ordinal twice, last 3": [USER, '{' + TS + ',"ordinal":"x","ordinal":3' + END],
}


def read_thread(codex, lines):
    home = tempfile.mkdtemp(prefix="codex-probe-")
    try:
        d = os.path.join(home, "sessions/2026/12/02")
        os.makedirs(d)
        with open(os.path.join(d, "rollout-2026-12-02T10-00-00-%s.jsonl" % TID), "w") as f:
            f.write("\n".join(lines) + "\n")
        env = dict(os.environ, CODEX_HOME=home, HOME=home)
        p = subprocess.Popen([codex, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, env=env, text=True)

        def call(i, method, params):
            p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
            p.stdin.flush()
            for line in p.stdout:
                m = json.loads(line)
                if m.get("id") == i:
                    return m
            return None
        try:
            call(1, "initialize", {"clientInfo": {"name": "tailproof-probe", "version": "0"}})
            p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "initialized"}) + "\n")
            return call(2, "thread/read", {"threadId": TID, "includeTurns": True})
        finally:
            p.kill()
            p.wait()
    finally:
        shutil.rmtree(home, ignore_errors=True)


def main():
    codex = sys.argv[1] if len(sys.argv) > 1 else CODEX
    print(subprocess.run([codex, "--version"], capture_output=True, text=True).stdout.strip())
    for name, tail in CASES.items():
        r = read_thread(codex, [META, START] + tail)
        if r is None or "error" in r:
            print("%-36s error %s" % (name, r and r["error"]))
            continue
        turns = []
        for t in r["result"]["thread"].get("turns", []):
            items = []
            for it in t.get("items", []):
                c = it.get("content")
                text = c[0].get("text") if isinstance(c, list) and c else it.get("text")
                items.append("%s %s" % (it.get("type"), json.dumps(text)))
            turns.append("%s %s [%s]" % (t.get("id"), t.get("status"), ", ".join(items)))
        print("%-36s %s" % (name, "; ".join(turns)))


if __name__ == "__main__":
    main()
