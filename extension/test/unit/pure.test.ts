/**
 * Unit tests of the client's pure modules (no VS Code API): terminal text cleaning,
 * bounded recording, Python version probing, folder expansion, the webview document,
 * the debouncer, the server launch and the terminal line matching.
 */
import assert from "node:assert/strict";
import * as path from "node:path";
import { describe, it, mock } from "node:test";
import { stripEscapes, terminalOutputToText } from "../../src/ansi";
import { BoundedText } from "../../src/boundedText";
import { Debouncer } from "../../src/debounce";
import { KnownFailureLines } from "../../src/failureLines";
import { expandFolderPath } from "../../src/folderPaths";
import { parseProbeOutput, unsupportedReason } from "../../src/pythonVersion";
import { prepareReportHtml, reportCsp } from "../../src/reportHtml";
import { buildServerLaunch } from "../../src/serverLaunch";

describe("terminalOutputToText", () => {
  it("removes colours, OSC shell-integration marks and CRLF", () => {
    const raw = "\x1b]633;C\x07\x1b[31m[rank1]: RuntimeError: boom\x1b[0m\r\nnext line\r\n";
    assert.equal(terminalOutputToText(raw), "[rank1]: RuntimeError: boom\nnext line\n");
  });

  it("keeps only what a progress bar finally shows", () => {
    assert.equal(terminalOutputToText("step 1/3\rstep 2/3\rstep 3/3\r\ndone"), "step 3/3\ndone");
  });

  it("leaves plain text alone", () => {
    const text = "[default5]:[rank5]: torch.OutOfMemoryError: CUDA out of memory.";
    assert.equal(stripEscapes(text), text);
  });
});

describe("BoundedText", () => {
  it("keeps everything under the limit", () => {
    const buffer = new BoundedText(100);
    buffer.append("a\n");
    buffer.append("b\n");
    assert.equal(buffer.text(), "a\nb\n");
    assert.equal(buffer.truncated, false);
  });

  it("keeps the last bytes and drops the cut first line", () => {
    const buffer = new BoundedText(20);
    for (let index = 0; index < 10; index++) {
      buffer.append(`line ${index}\n`);
    }
    assert.equal(buffer.truncated, true);
    assert.ok(buffer.byteLength <= 20);
    const text = buffer.text();
    assert.ok(text.endsWith("line 9\n"));
    assert.ok(text.split("\n")[0]?.startsWith("line "), `first line was cut: ${JSON.stringify(text)}`);
  });

  it("counts UTF-8 bytes, not characters", () => {
    const buffer = new BoundedText(10);
    buffer.append("ééééé\n"); // 11 bytes
    assert.ok(buffer.byteLength <= 10);
  });

  it("rejects a non-positive limit", () => {
    assert.throws(() => new BoundedText(0), RangeError);
  });
});

describe("Python probe", () => {
  it("parses the probe's answer", () => {
    assert.deepEqual(parseProbeOutput('{"version": [3, 11, 7], "executable": "/usr/bin/python3"}\n'), {
      version: [3, 11, 7],
      executable: "/usr/bin/python3",
    });
  });

  it("rejects output that is not the probe's", () => {
    assert.equal(parseProbeOutput("Python 3.11.7"), undefined);
    assert.equal(parseProbeOutput('{"version": [3, 11], "executable": "x"}'), undefined);
    assert.equal(parseProbeOutput('{"version": [3, "11", 7], "executable": "x"}'), undefined);
  });

  it("needs 3.10 or newer, and a bundled ABI", () => {
    assert.match(unsupportedReason([3, 9, 18], undefined) ?? "", /too old/);
    assert.equal(unsupportedReason([3, 10, 0], undefined), undefined);
    assert.equal(unsupportedReason([3, 13, 0], undefined), undefined);
    assert.equal(unsupportedReason([3, 12, 1], ["3.10", "3.11", "3.12"]), undefined);
    assert.match(unsupportedReason([3, 13, 0], ["3.10", "3.11", "3.12"]) ?? "", /built for Python 3\.10, 3\.11, 3\.12/);
  });
});

describe("expandFolderPath", () => {
  const context = { homeDirectory: "/home/ada", workspaceFolder: "/work/run" };

  it("expands ~, ${workspaceFolder} and relative paths", () => {
    assert.equal(expandFolderPath("~/sigs", context), "/home/ada/sigs");
    assert.equal(expandFolderPath("${workspaceFolder}/.faultline", context), "/work/run/.faultline");
    assert.equal(expandFolderPath("sigs", context), "/work/run/sigs");
    assert.equal(expandFolderPath("/abs/sigs/", context), path.normalize("/abs/sigs/"));
  });

  it("gives up without a folder to resolve against", () => {
    const noFolder = { homeDirectory: "/home/ada", workspaceFolder: undefined };
    assert.equal(expandFolderPath("sigs", noFolder), undefined);
    assert.equal(expandFolderPath("${workspaceFolder}/x", noFolder), undefined);
    assert.equal(expandFolderPath("  ", context), undefined);
  });
});

describe("prepareReportHtml", () => {
  const report =
    '<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src *"><style>p{}</style></head>' +
    '<body><p class="fl-event" data-file="/x/console.log" data-line="3">x</p><script>alert(1)</script></body></html>';

  it("injects our CSP and our nonce'd script, and drops the document's own", () => {
    const html = prepareReportHtml(report, "N0NCE", "vscode-webview://abc");
    assert.equal((html.match(/Content-Security-Policy/g) ?? []).length, 1);
    assert.ok(html.includes(reportCsp("N0NCE", "vscode-webview://abc")));
    assert.ok(!html.includes("alert(1)"));
    assert.equal((html.match(/<script/g) ?? []).length, 1);
    assert.ok(html.includes('<script nonce="N0NCE">'));
    assert.ok(html.indexOf("<script") > html.indexOf('class="fl-event"'), "the script runs after the events exist");
  });

  it("allows inline styles but scripts only by nonce", () => {
    const csp = reportCsp("abc", "vscode-webview://x");
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /style-src vscode-webview:\/\/x 'unsafe-inline'/);
    assert.match(csp, /script-src 'nonce-abc'/);
    assert.doesNotMatch(csp, /script-src[^;]*unsafe-inline/);
  });

  it("wraps a fragment in a document", () => {
    const html = prepareReportHtml("<p>only a fragment</p>", "n", "s");
    assert.match(html, /^<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy"/);
    assert.ok(html.includes("only a fragment"));
  });
});

describe("Debouncer", () => {
  it("merges a burst of requests into one call with every reason", () => {
    mock.timers.enable({ apis: ["setTimeout"] });
    try {
      const calls: string[][] = [];
      const debouncer = new Debouncer<string>(300, (reasons) => calls.push(reasons));
      debouncer.request("settings");
      mock.timers.tick(200);
      debouncer.request("interpreter");
      mock.timers.tick(299);
      assert.equal(calls.length, 0);
      assert.equal(debouncer.pending, true);
      mock.timers.tick(1);
      assert.deepEqual(calls, [["settings", "interpreter"]]);
      debouncer.request("command");
      debouncer.dispose();
      mock.timers.tick(1000);
      assert.equal(calls.length, 1);
    } finally {
      mock.timers.reset();
    }
  });
});

describe("buildServerLaunch", () => {
  it("runs -m faultline with the bundle first on PYTHONPATH", () => {
    const launch = buildServerLaunch({
      interpreter: ["/opt/py/bin/python3", "-X", "utf8"],
      bundledLibs: "/ext/bundled/libs",
      sourceServerDir: undefined,
      baseEnv: { PYTHONPATH: "/user/path", HOME: "/home/ada", UNSET: undefined },
    });
    assert.equal(launch.command, "/opt/py/bin/python3");
    assert.deepEqual(launch.args, ["-X", "utf8", "-m", "faultline"]);
    assert.deepEqual(launch.interpreterArgs, ["-X", "utf8"]);
    assert.equal(launch.env.PYTHONPATH, ["/ext/bundled/libs", "/user/path"].join(path.delimiter));
    assert.equal(launch.env.PYTHONNOUSERSITE, "1");
    assert.equal(launch.env.HOME, "/home/ada");
    assert.ok(!("UNSET" in launch.env));
  });

  it("uses the source checkout's server folder when not packaged", () => {
    const launch = buildServerLaunch({
      interpreter: ["python3"],
      bundledLibs: undefined,
      sourceServerDir: "/repo/server",
      baseEnv: {},
    });
    assert.equal(launch.env.PYTHONPATH, "/repo/server");
    assert.equal(launch.env.PYTHONNOUSERSITE, undefined);
  });

  it("refuses an empty interpreter", () => {
    assert.throws(() =>
      buildServerLaunch({ interpreter: [], bundledLibs: undefined, sourceServerDir: undefined, baseEnv: {} }),
    );
  });
});

describe("KnownFailureLines", () => {
  const cause =
    "[default5]:[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.35 GiB. GPU 5 has a total capacity of 79.14 GiB";

  it("finds a known line inside a rendered terminal line", () => {
    const known = new KnownFailureLines();
    known.add([cause, "short"]);
    assert.equal(known.size, 1, "too short texts are ignored");
    const match = known.find(`  ${cause}`);
    assert.deepEqual(match, { startIndex: 2, length: cause.length, text: cause });
  });

  it("matches a wrapped part of a known line, and nothing else", () => {
    const known = new KnownFailureLines();
    known.add([cause]);
    assert.ok(known.find("torch.OutOfMemoryError: CUDA out of memory. Tried") !== undefined);
    assert.equal(known.find("[default0]:step   630/20000 | loss 6.8290"), undefined);
    assert.equal(known.find("CUDA"), undefined);
  });
});
