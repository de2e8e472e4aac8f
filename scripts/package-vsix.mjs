// Packages the extension as a linux-x64 VSIX (dist/faultline-<version>-linux-x64.vsix)
// after `npm run compile` and `npm run bundle:server`. The client is bundled by esbuild,
// so no node_modules go in; the Python server and its wheels are in extension/bundled.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const manifest = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
const required = ["extension/dist/extension.js", "extension/bundled/manifest.json", "extension/bundled/libs/faultline"];
for (const file of required) {
  if (!existsSync(path.join(root, file))) {
    console.error(`Missing ${file}: run "npm run compile" and "npm run bundle:server" first.`);
    process.exit(1);
  }
}
const out = path.join("dist", `faultline-${manifest.version}-linux-x64.vsix`);
mkdirSync(path.join(root, "dist"), { recursive: true });
// extension/README.md links its images as media/x.png (right when reading the repository);
// in the VSIX the README sits at the package root, next to the extension/ folder.
const readme = readFileSync(path.join(root, "extension", "README.md"), "utf8").replace(
  /\]\(media\//g,
  "](extension/media/",
);
const packagedReadme = path.join("dist", "README.vsix.md");
writeFileSync(path.join(root, packagedReadme), readme);
const vsce = path.join(root, "node_modules", ".bin", "vsce");
const args = [
  "package",
  "--target", "linux-x64",
  "--out", out,
  "--no-dependencies",
  "--readme-path", packagedReadme,
  "--no-rewrite-relative-links",
  "--allow-missing-repository",
];
if (!existsSync(path.join(root, "LICENSE"))) {
  args.push("--skip-license");
}
const result = spawnSync(vsce, args, { cwd: root, stdio: "inherit" });
if (result.status !== 0) {
  process.exit(result.status ?? 1);
}
console.log(`VSIX: ${path.join(root, out)}`);
