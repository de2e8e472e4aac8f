/**
 * Where the Python server comes from: the libraries packaged into the VSIX
 * (`extension/bundled/libs`, described by `extension/bundled/manifest.json`), or, in a
 * source checkout, the repository's `server/` folder and the interpreter's own packages.
 */
import * as fs from "node:fs";
import * as path from "node:path";

export interface ServerBundle {
  /** `extension/bundled/libs`, when the extension is packaged. */
  libs: string | undefined;
  /** Python minor versions ("3.11") the bundled binary wheels were built for. */
  pythonVersions: string[] | undefined;
  /** The repository's `server/` folder, when running from a source checkout. */
  sourceServerDir: string | undefined;
  description: string;
}

interface BundleManifest {
  pythonVersions?: unknown;
  platform?: unknown;
}

export function locateServerBundle(extensionRoot: string): ServerBundle {
  const libs = path.join(extensionRoot, "extension", "bundled", "libs");
  const manifestPath = path.join(extensionRoot, "extension", "bundled", "manifest.json");
  if (fs.existsSync(path.join(libs, "faultline"))) {
    let pythonVersions: string[] | undefined;
    let platform = "unknown platform";
    try {
      const manifest = JSON.parse(fs.readFileSync(manifestPath, "utf8")) as BundleManifest;
      if (Array.isArray(manifest.pythonVersions)) {
        pythonVersions = manifest.pythonVersions.filter((version): version is string => typeof version === "string");
      }
      if (typeof manifest.platform === "string") {
        platform = manifest.platform;
      }
    } catch {
      // A bundle without a manifest still runs; the version check is then skipped.
    }
    const versions = pythonVersions === undefined ? "any Python" : `Python ${pythonVersions.join(", ")}`;
    return {
      libs,
      pythonVersions,
      sourceServerDir: undefined,
      description: `bundled server in ${libs} (${platform}, ${versions})`,
    };
  }
  const sourceServerDir = path.join(extensionRoot, "server");
  if (fs.existsSync(path.join(sourceServerDir, "faultline"))) {
    return {
      libs: undefined,
      pythonVersions: undefined,
      sourceServerDir,
      description: `source checkout ${sourceServerDir} (dependencies from the interpreter's environment)`,
    };
  }
  return {
    libs: undefined,
    pythonVersions: undefined,
    sourceServerDir: undefined,
    description: "no bundled server: faultline must be installed in the interpreter's environment",
  };
}
