/**
 * Records the incident session of docs/console.md (and the README's short version) again, so the pasted
 * transcript can follow the bot's wording: `npx tsx scripts/record-incident.ts > session.txt` (about 10
 * minutes: the watch's checks and the alert's resolution run on the default clock).
 *
 * It runs `npm start` without Slack variables (the local console) in a fresh DATA_DIR and types what a
 * person would: a watch on a quiet zone, `/sim attack`, Acknowledge on the alert, the incident card, Block
 * on its busiest IP, approval by another user, `/sim calm`, waits for the alert to resolve, exports the
 * postmortem draft from the resolution's timeline and prints the whole file after the session. Buttons are
 * pressed by their label, read from the output, so renumbering does not break it.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

const ZONE = "18405";
const MINUTE = 60_000;

let postmortem = "";
const dataDir = mkdtempSync(join(tmpdir(), "edgeops-incident-"));
const env = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !name.startsWith("SLACK_") && name !== "DATABASE_URL"),
);
const child = spawn("npm", ["start", "--silent"], {
  env: { ...env, DATA_DIR: dataDir },
  stdio: ["pipe", "pipe", "inherit"],
});
let output = "";
child.stdout.on("data", (chunk: Buffer) => {
  output += chunk.toString("utf8");
  process.stdout.write(chunk);
});

/** Waits until the output after `from` matches; returns the match. */
async function waitFor(pattern: RegExp, from: number, timeoutMs: number): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const match = output.slice(from).match(pattern);
    if (match) return match;
    await sleep(200);
  }
  throw new Error(`waited ${timeoutMs / 1000} s for ${pattern} in vain`);
}

/** Types a line and waits for the console to print what follows it. */
async function type(line: string): Promise<number> {
  const from = output.length;
  child.stdin.write(`${line}\n`);
  await waitFor(/\S/, from, 30_000);
  await sleep(1_500);
  return from;
}

/**
 * Presses the button whose label matches, in the output since `from` (its latest drawing: a message updated in
 * place is printed again with new numbers); answers a confirm dialog with y.
 */
async function press(label: RegExp, from: number): Promise<number> {
  const text = output.slice(from);
  const buttons = [...text.matchAll(/\[(\d+)\] ([^[\n]+)/g)].filter((m) => label.test((m[2] ?? "").trim()));
  const number = buttons.at(-1)?.[1];
  if (!number) throw new Error(`no button ${label} in:\n${text}`);
  const at = await type(number);
  if (/\by = /.test(output.slice(at))) await type("y");
  return at;
}

try {
  await waitFor(/\/quit/, 0, MINUTE);
  await type("/in #incident");
  await type(`/edge watch zone ${ZONE}`);
  // The watch's first check learns the zone's baseline; an attack staged before it would be part of it.
  let checked = false;
  for (let i = 0; i < 12 && !checked; i++) {
    await sleep(10_000);
    const listAt = await type("/edge watch list");
    checked = / · checked \d{4}-/.test(output.slice(listAt));
  }
  await type(`/sim attack ${ZONE} 6`);
  const alertAt = output.length;
  await waitFor(
    new RegExp(`== \\S+ Attack on shield zone ${ZONE} ==[\\s\\S]*Acknowledge`),
    alertAt,
    8 * MINUTE,
  );
  await press(/^Acknowledge$/, alertAt);
  const cardAt = await type(`/edge incident ${ZONE}`);
  await waitFor(/\] Refresh/, cardAt, MINUTE);
  const requestAt = await press(/^Block \d+\.\d+\.\d+\.\d+$/, output.indexOf("*Top offenders*", cardAt));
  await waitFor(/\] Approve/, requestAt, MINUTE);
  // The approval card is drawn again once its impact preview is in (new button numbers).
  await waitFor(/Impact in the last hour:\*? (?!estimating)[\s\S]*\] Approve/, requestAt, MINUTE).catch(
    () => undefined,
  );
  await type("/as carol");
  const approvalAt = await press(/^Approve$/, requestAt);
  await waitFor(/approved by @carol/, approvalAt, MINUTE);
  await type("/as alice");
  const calmAt = await type("/sim calm");
  await waitFor(/Resolved after/, calmAt, 15 * MINUTE);
  const timelineAt = (await waitFor(/== Timeline of shield zone/, calmAt, MINUTE)).index ?? 0;
  const exportAt = await press(/^Export postmortem draft$/, calmAt + timelineAt);
  // The draft's own file (a chart of the window is uploaded beside it, as a picture).
  const saved = await waitFor(/(?:Also saved at|the full file is at) (\S+\.md)/, exportAt, MINUTE);
  postmortem = readFileSync(saved[1] ?? "", "utf8");
  await type("/edge audit 5");
  await type("/quit");
} finally {
  child.stdin.end();
  await sleep(2_000);
  if (child.exitCode === null) child.kill("SIGTERM");
  rmSync(dataDir, { recursive: true, force: true });
}
if (postmortem) process.stdout.write(`\n===== the exported postmortem draft, whole =====\n${postmortem}\n`);
