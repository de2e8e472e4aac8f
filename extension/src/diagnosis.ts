/**
 * The parts of the server's diagnosis JSON (schema_version 1, the CLI's `--json` output)
 * that the client shows: a checked reading of the result and the one-line summary a
 * notification needs. The client never decides anything about failures itself.
 */

export type Verdict = "failure" | "unknown" | "no_failure";

export interface DiagnosisLine {
  signature_id: string;
  title: string;
  rank: number | null;
  file: string;
  line: number;
  text: string;
  message: string;
}

export interface DiagnosisFix {
  summary: string;
  steps: string[];
  env: { name: string; value: string; note: string }[];
}

export interface Diagnosis {
  verdict: Verdict;
  initiatingRank: number | null;
  rootCause: DiagnosisLine | undefined;
  collateral: DiagnosisLine[];
  suspicious: { file: string; line: number; text: string }[];
  /** For no_failure: the lines that looked like trouble, and why each does not show a failure. */
  considered: { file: string; line: number; text: string; whyHarmless: string }[];
  fix: DiagnosisFix | undefined;
  verificationCommand: string | undefined;
  confidence: number;
}

/** A diagnosis as returned by the server commands (`includeHtml` adds `html`). */
export interface DiagnosisResult {
  diagnosis: Diagnosis;
  html: string | undefined;
}

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function optionalInteger(value: unknown): number | null {
  return typeof value === "number" && Number.isInteger(value) ? value : null;
}

function readLine(value: unknown): DiagnosisLine | undefined {
  if (!isObject(value) || typeof value.file !== "string" || typeof value.line !== "number") {
    return undefined;
  }
  return {
    signature_id: text(value.signature_id),
    title: text(value.title),
    rank: optionalInteger(value.rank),
    file: value.file,
    line: value.line,
    text: text(value.text),
    message: text(value.message),
  };
}

function readFix(value: unknown): DiagnosisFix | undefined {
  if (!isObject(value)) {
    return undefined;
  }
  const steps = Array.isArray(value.steps) ? value.steps.filter((step) => typeof step === "string") : [];
  const env = Array.isArray(value.env)
    ? value.env.filter(isObject).map((entry) => ({
        name: text(entry.name),
        value: text(entry.value),
        note: text(entry.note),
      }))
    : [];
  return { summary: text(value.summary), steps, env };
}

/** Reads the diagnosis JSON; throws with a precise message when it is not one. */
export function readDiagnosis(value: unknown): Diagnosis {
  if (!isObject(value)) {
    throw new Error("the server returned no diagnosis object");
  }
  const verdict = value.verdict;
  if (verdict !== "failure" && verdict !== "unknown" && verdict !== "no_failure") {
    throw new Error(`the server returned an unexpected verdict: ${JSON.stringify(verdict)}`);
  }
  const verification = isObject(value.verification) ? value.verification : undefined;
  const command = verification !== undefined ? text(verification.command).trim() : "";
  return {
    verdict,
    initiatingRank: optionalInteger(value.initiating_rank),
    rootCause: readLine(value.root_cause),
    collateral: Array.isArray(value.collateral)
      ? value.collateral.map(readLine).filter((line): line is DiagnosisLine => line !== undefined)
      : [],
    suspicious: Array.isArray(value.suspicious_lines)
      ? value.suspicious_lines.filter(isObject).map((suspect) => ({
          file: text(suspect.file),
          line: typeof suspect.line === "number" ? suspect.line : 0,
          text: text(suspect.text),
        }))
      : [],
    considered: Array.isArray(value.considered_lines)
      ? value.considered_lines.filter(isObject).map((line) => ({
          file: text(line.file),
          line: typeof line.line === "number" ? line.line : 0,
          text: text(line.text),
          whyHarmless: text(line.why_harmless),
        }))
      : [],
    fix: readFix(value.fix),
    verificationCommand: command.length > 0 ? command : undefined,
    confidence: typeof value.confidence === "number" ? value.confidence : 0,
  };
}

/** Reads a server command result: the diagnosis JSON, plus `html` when it was asked for. */
export function readDiagnosisResult(value: unknown): DiagnosisResult {
  const html = isObject(value) && typeof value.html === "string" ? value.html : undefined;
  return { diagnosis: readDiagnosis(value), html };
}

/** Reads `faultline.reportForDocument`'s `{diagnosis, html}`. */
export function readDocumentReport(value: unknown): DiagnosisResult | undefined {
  if (!isObject(value) || value.diagnosis === undefined || value.diagnosis === null) {
    return undefined;
  }
  return { diagnosis: readDiagnosis(value.diagnosis), html: typeof value.html === "string" ? value.html : undefined };
}

/** The answer first, for a notification: the initiating rank, the root cause, the other ranks it took down, the fix. */
export function failureHeadline(diagnosis: Diagnosis): string {
  const cause = diagnosis.rootCause;
  const rank = diagnosis.initiatingRank ?? cause?.rank ?? null;
  const who = rank === null ? "The failure" : `Rank ${rank}`;
  if (diagnosis.verdict !== "failure" || cause === undefined) {
    if (diagnosis.verdict !== "no_failure") {
      return "Unknown failure: no known signature explains it; the most suspicious lines are in the report.";
    }
    const weighed = diagnosis.considered.length;
    return weighed === 0
      ? "No failure found: no line shows an error, a failed exit or a traceback."
      : `No failure found: ${weighed} line${weighed === 1 ? "" : "s"} looked like trouble; the report says why ${
          weighed === 1 ? "it does" : "each does"
        } not show a failure.`;
  }
  const what = cause.title.length > 0 ? cause.title : cause.signature_id;
  // Ranks other than the culprit's: its own later lines and lines with no rank are not "other ranks".
  const others = new Set(
    diagnosis.collateral.map((line) => line.rank).filter((other): other is number => other !== null && other !== rank),
  ).size;
  const collateral = others === 0 ? "" : ` (${others} other rank${others === 1 ? "" : "s"} failed as a consequence)`;
  const summary = diagnosis.fix?.summary.trim() ?? "";
  const fix = summary.length === 0 ? "" : ` Fix: ${summary.endsWith(".") ? summary : `${summary}.`}`;
  return rank === null ? `${who}: ${what}${collateral}.${fix}` : `${who} failed first: ${what}${collateral}.${fix}`;
}

/** Every line the diagnosis points at, for making them clickable in the terminal. */
export function matchedLineTexts(diagnosis: Diagnosis): string[] {
  const lines = [diagnosis.rootCause, ...diagnosis.collateral].filter(
    (line): line is DiagnosisLine => line !== undefined,
  );
  return [...lines.map((line) => line.text), ...diagnosis.suspicious.map((suspect) => suspect.text)];
}
