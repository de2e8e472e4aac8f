/**
 * Probing a Python interpreter: the one-line script the extension runs with a candidate
 * interpreter, parsing its answer, and the version rules the server needs.
 */

export type PythonVersion = readonly [major: number, minor: number, micro: number];

export interface ProbeResult {
  version: PythonVersion;
  executable: string;
}

export const MINIMUM_PYTHON: PythonVersion = [3, 10, 0];

/** Printed by the candidate interpreter: its version and the real executable path. */
export const PROBE_SCRIPT =
  "import json, sys; print(json.dumps({'version': list(sys.version_info[:3]), 'executable': sys.executable}))";

/** Parses the probe's stdout; undefined when it is not what the probe prints. */
export function parseProbeOutput(stdout: string): ProbeResult | undefined {
  const lastLine = stdout.trim().split(/\r?\n/).pop() ?? "";
  let parsed: unknown;
  try {
    parsed = JSON.parse(lastLine);
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null) {
    return undefined;
  }
  const { version, executable } = parsed as { version?: unknown; executable?: unknown };
  if (!Array.isArray(version) || typeof executable !== "string") {
    return undefined;
  }
  const [major, minor, micro] = version as unknown[];
  if (!Number.isInteger(major) || !Number.isInteger(minor) || !Number.isInteger(micro) || version.length !== 3) {
    return undefined;
  }
  return { version: [major as number, minor as number, micro as number], executable };
}

export function formatVersion(version: PythonVersion): string {
  return version.join(".");
}

export function compareVersions(left: PythonVersion, right: PythonVersion): number {
  const [leftMajor, leftMinor, leftMicro] = left;
  const [rightMajor, rightMinor, rightMicro] = right;
  return leftMajor - rightMajor || leftMinor - rightMinor || leftMicro - rightMicro;
}

/**
 * Why this interpreter cannot run the server, or undefined when it can.
 * `bundledMinorVersions` lists the "3.x" versions the packaged binary wheels were built
 * for; undefined when running from a source checkout (dependencies come from the
 * interpreter's own environment).
 */
export function unsupportedReason(
  version: PythonVersion,
  bundledMinorVersions: readonly string[] | undefined,
): string | undefined {
  if (compareVersions(version, MINIMUM_PYTHON) < 0) {
    return `Python ${formatVersion(version)} is too old; Faultline needs Python ${MINIMUM_PYTHON[0]}.${MINIMUM_PYTHON[1]} or newer`;
  }
  const minor = `${version[0]}.${version[1]}`;
  if (bundledMinorVersions !== undefined && !bundledMinorVersions.includes(minor)) {
    return `the bundled server libraries are built for Python ${bundledMinorVersions.join(", ")}, not ${minor}`;
  }
  return undefined;
}
