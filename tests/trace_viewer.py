#!/usr/bin/env python3
"""trace_viewer.py - emu's flows in a real trace viewer (issue 34): Debian's chromium, headless,
driven over the DevTools protocol (--remote-debugging-pipe, no network), loads the trace of
tests/trace_viewer.lua into Chrome DevTools' own trace model (the Performance panel's, bundled
with Chromium as devtools://devtools/bundled/models/trace/trace.js), and checks that every flow
the dump wrote is a flow there, joining its two events, and that the lanes carry their roles.
chrome://tracing (Catapult) is tried first and said to be missing where it is (Chromium 156 of
Debian 12 lists it but serves ERR_FAILED: the trace viewer's resources are not built in).
Chromium runs in a session of its own; its process group is ended by its id when done.
usage: tests/trace_viewer.py MGPU_HARNESS SOURCE_DIR   exit 77 (skipped) without chromium."""
import json, os, select, shutil, signal, subprocess, sys, tempfile, time

exe, src = sys.argv[1], sys.argv[2]
browser = shutil.which("chromium") or shutil.which("chromium-browser")
if not browser:
    print("SKIP: chromium is not installed (apt-get install chromium; scripts/setup-deps.sh installs it)")
    sys.exit(77)

tmp = tempfile.mkdtemp(prefix="mgpu-trace-viewer.")
trace = os.path.join(tmp, "roles.json")
subprocess.run([exe, os.path.join(src, "tests", "trace_viewer.lua"), src, trace], check=True)
doc = json.load(open(trace))
flows = [e for e in doc["traceEvents"] if e.get("ph") == "s"]
assert flows, "the trace has no flows"

profile = os.path.join(tmp, "profile")
os.mkdir(profile)
# chrome://chrome-urls' "enable internal debugging pages", so that chrome://tracing may load
json.dump({"internal_only_uis_enabled": True}, open(os.path.join(profile, "Local State"), "w"))
to_browser, from_browser = os.pipe(), os.pipe()
def child_fds():  # the protocol's pipes as the browser's fds 3 (it reads) and 4 (it writes)
    os.dup2(to_browser[0], 3, inheritable=True)
    os.dup2(from_browser[1], 4, inheritable=True)
fds = [os.dup(f) if f < 5 else f for f in (to_browser[0], from_browser[1])]  # out of 3 and 4's way
to_browser, from_browser = (fds[0], to_browser[1]), (from_browser[0], fds[1])
proc = subprocess.Popen([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                         "--disable-component-update", "--disable-sync", "--no-first-run", "--no-default-browser-check",
                         "--remote-debugging-pipe", "--user-data-dir=" + profile, "about:blank"],
                        preexec_fn=child_fds, close_fds=False, start_new_session=True,
                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "err"), "w"))
os.close(to_browser[0])
os.close(from_browser[1])
pending, ids = b"", [0]

def call(method, params=None, session=None, timeout=60):
    global pending
    ids[0] += 1
    msg = {"id": ids[0], "method": method, "params": params or {}}
    if session: msg["sessionId"] = session
    os.write(to_browser[1], json.dumps(msg).encode() + b"\0")
    end = time.time() + timeout
    while time.time() < end:
        while b"\0" in pending:
            one, pending = pending.split(b"\0", 1)
            reply = json.loads(one)
            if reply.get("id") == ids[0]:
                if "error" in reply: raise RuntimeError("%s: %s" % (method, reply["error"]))
                return reply["result"]
        ready, _, _ = select.select([from_browser[0]], [], [], 0.5)
        if ready:
            chunk = os.read(from_browser[0], 1 << 20)
            if not chunk: raise RuntimeError("chromium closed the protocol pipe (%s)" % method)
            pending += chunk
    raise RuntimeError("no answer to %s in %d s" % (method, timeout))

def evaluate(url, expression):
    target = call("Target.createTarget", {"url": url})["targetId"]
    session = call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    time.sleep(1)
    r = call("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True}, session)
    if "exceptionDetails" in r: raise RuntimeError(json.dumps(r["exceptionDetails"])[:2000])
    return r["result"].get("value")

fail = 0
try:
    page = evaluate("chrome://tracing", "document.title + ' | ' + document.body.innerText.slice(0, 200)")
    if "tr" in evaluate("chrome://tracing", "typeof tr === 'object' ? 'tr' : ''"):
        print("chrome://tracing: the Catapult viewer is there (not used by this test yet)")
    else:
        print("chrome://tracing: not in this Chromium (%s)" % " ".join(page.split())[:120])
    check = """(async () => {
      const T = await import('devtools://devtools/bundled/models/trace/trace.js');
      const doc = %s;
      const model = T.TraceModel.Model.createWithAllHandlers();
      await model.parse(doc.traceEvents, {isFreshRecording: false, metadata: {}});
      const data = model.parsedTrace(0).data;
      const flows = data.Flows.flows.map(f => f.map(e => ({ph: e.ph, name: e.name, ts: e.ts, tid: e.tid})));
      const threads = [];
      for (const [pid, p] of data.Meta.threadsInProcess) for (const [tid, t] of p) threads.push(t.args.name);
      return JSON.stringify({flows, threads});
    })()""" % json.dumps(doc)
    got = json.loads(evaluate("devtools://devtools/bundled/trace_app.html", check))
    print("Chrome DevTools' trace model: %d flows (the dump wrote %d), lanes %s" %
          (len(got["flows"]), len(flows), sorted(set(got["threads"]))))
    if len(got["flows"]) != len(flows):
        print("FAILED  DevTools found %d flows, the dump wrote %d" % (len(got["flows"]), len(flows))); fail = 1
    for f in got["flows"]:
        if len(f) != 2 or f[0]["ts"] > f[1]["ts"]:
            print("FAILED  a flow that does not join two events in time order: %s" % f); fail = 1; break
    want = {"producer", "consumer"}
    if {t.rsplit(" \u00b7 ", 1)[-1] for t in got["threads"]} != want:
        print("FAILED  the lanes' names in DevTools do not end in the roles: %s" % got["threads"]); fail = 1
except Exception as e:  # the browser's own failure: say it, with its stderr's end
    print("FAILED  %s" % e)
    print(open(os.path.join(tmp, "err")).read()[-1500:])
    fail = 1
finally:
    try: os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError: pass
    try: proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL); proc.wait()
    shutil.rmtree(tmp, ignore_errors=True)
print("trace_viewer: %s" % ("FAILED" if fail else "DevTools' trace model loads every flow of emu's trace"))
sys.exit(fail)
