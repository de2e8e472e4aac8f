/**
 * Tests of reading the server's diagnosis JSON. The main case runs the real engine (the
 * CLI's `--format json`, the same dict the server commands return) on the bundled
 * OOM-cascade example; it is skipped only when no Python with faultline is available.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import { failureHeadline, matchedLineTexts, readDiagnosis, readDiagnosisResult, readDocumentReport } from "../../src/diagnosis";

const repoRoot = path.resolve(__dirname, "..", "..", "..", "..");
const example = path.join(repoRoot, "examples", "oom-cascade", "console.log");
const venvPython = path.join(repoRoot, ".venv", "bin", "python");
const python = process.env.PYTHON ?? (existsSync(venvPython) ? venvPython : "python3");

function engineJson(): unknown {
  const result = spawnSync(python, ["-m", "faultline", "diagnose", example, "--format", "json", "--quiet"], {
    cwd: repoRoot,
    env: { ...process.env, PYTHONPATH: path.join(repoRoot, "server") },
    encoding: "utf8",
  });
  if (result.error !== undefined || result.stdout.trim().length === 0) {
    return undefined;
  }
  return JSON.parse(result.stdout) as unknown;
}

describe("readDiagnosis on the engine's real output", () => {
  const json = existsSync(example) ? engineJson() : undefined;

  it("reads the OOM cascade: rank 5, the OOM line, collateral, fix and verification", { skip: json === undefined }, () => {
    const diagnosis = readDiagnosis(json);
    assert.equal(diagnosis.verdict, "failure");
    assert.equal(diagnosis.initiatingRank, 5);
    assert.equal(diagnosis.rootCause?.line, 344);
    assert.match(diagnosis.rootCause.text, /OutOfMemoryError/);
    assert.ok(diagnosis.collateral.length >= 3);
    assert.ok(diagnosis.fix !== undefined && diagnosis.fix.summary.length > 0);
    assert.ok(diagnosis.verificationCommand !== undefined);
    const headline = failureHeadline(diagnosis);
    assert.match(headline, /^Rank 5 failed first: .*out of memory/i);
    // The answer first: the other ranks taken down (not the culprit's own lines), then the fix in one line.
    assert.match(headline, /\(7 other ranks failed as a consequence\)\. Fix: \S/);
    assert.ok(headline.includes(diagnosis.fix.summary));
    assert.ok(matchedLineTexts(diagnosis).includes(diagnosis.rootCause.text));
  });
});

describe("readDiagnosis on edge cases", () => {
  it("reads an unknown verdict without a root cause", () => {
    const diagnosis = readDiagnosis({
      verdict: "unknown",
      initiating_rank: null,
      root_cause: null,
      collateral: [],
      suspicious_lines: [{ file: "a.log", line: 7, text: "Segmentation fault", score: 0.8, reason: "error word" }],
      fix: null,
      verification: null,
      confidence: 0.2,
    });
    assert.equal(diagnosis.rootCause, undefined);
    assert.equal(diagnosis.verificationCommand, undefined);
    assert.deepEqual(diagnosis.suspicious, [{ file: "a.log", line: 7, text: "Segmentation fault" }]);
    assert.match(failureHeadline(diagnosis), /^Unknown failure/);
  });

  it("says no failure for a healthy log, and that nothing looked like trouble", () => {
    const diagnosis = readDiagnosis({ verdict: "no_failure", collateral: [] });
    assert.equal(failureHeadline(diagnosis), "No failure found: no line shows an error, a failed exit or a traceback.");
  });

  it("says how many scary lines a no-failure answer weighed", () => {
    const diagnosis = readDiagnosis({
      verdict: "no_failure",
      collateral: [],
      considered_lines: [
        { file: "a.log", line: 3, rank: 0, text: "NCCL WARN Cuda failure 'out of memory'", why_harmless: "a warning" },
      ],
    });
    assert.deepEqual(diagnosis.considered, [
      { file: "a.log", line: 3, text: "NCCL WARN Cuda failure 'out of memory'", whyHarmless: "a warning" },
    ]);
    assert.match(failureHeadline(diagnosis), /^No failure found: 1 line looked like trouble; the report says why it does/);
  });

  it("refuses what is not a diagnosis", () => {
    assert.throws(() => readDiagnosis(null), /no diagnosis object/);
    assert.throws(() => readDiagnosis({ verdict: "maybe" }), /unexpected verdict/);
  });

  it("separates the html of a command result and reads reportForDocument", () => {
    const result = readDiagnosisResult({ verdict: "no_failure", html: "<html></html>" });
    assert.equal(result.html, "<html></html>");
    assert.equal(readDocumentReport({ diagnosis: null, html: "" }), undefined);
    assert.equal(readDocumentReport({ diagnosis: { verdict: "no_failure" }, html: "<p>" })?.html, "<p>");
  });
});
