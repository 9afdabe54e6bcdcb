/**
 * What the console keeps in DATA_DIR beside the bot's SQLite store, so a restart on the same folder carries on:
 * the built-in simulator's state (console-simulator.json), the channels' names (console-channels.json) and how far
 * `/sim clock` moved the time (console-clock.json). Each file is written whole, to a temporary file renamed over
 * the old one, shortly after a change and when the console stops. A file that cannot be read is left aside:
 * the console starts that part fresh and says so in one line.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Cancel, Clock } from "../../src/clock.js";
import { restoreState, type SimulatorState, saveState } from "../simulator/index.js";
import type { ConsoleChannel } from "./world.js";

const FILES = {
  simulator: "console-simulator.json",
  channels: "console-channels.json",
  clock: "console-clock.json",
} as const;
/** Changes within this long (console time) are written together. */
const SAVE_AFTER_MS = 250;
/** Further than `/sim clock` could have moved it in a year of rehearsals is not a saved offset. */
const MAX_AHEAD_MS = 366 * 86_400_000;

export interface SavedConsole {
  simulator: SimulatorState | undefined;
  channels: ConsoleChannel[] | undefined;
  clockAheadMs: number;
  /** One line per file that was there and could not be read. */
  notes: string[];
  /** What was restored, in words ("" when nothing). */
  restored: string;
}

function readText(dataDir: string, file: string): string | undefined {
  const path = join(dataDir, file);
  return existsSync(path) ? readFileSync(path, "utf8") : undefined;
}

const freshNote = (file: string, why: string) =>
  `The saved ${file} in DATA_DIR could not be read (${why}); that part starts fresh.`;

const CHANNEL_ID = /^C[A-Z0-9]{1,11}$/;
const CHANNEL_NAME = /^[a-z0-9][a-z0-9_-]{0,79}$/;

function parseChannels(text: string): ConsoleChannel[] {
  const parsed = JSON.parse(text) as unknown;
  const list = (parsed as { channels?: unknown } | null)?.channels;
  if (!Array.isArray(list) || list.length === 0) throw new Error("no list of channels");
  const channels = list.map((c: unknown) => {
    const { id, name } = (c ?? {}) as { id?: unknown; name?: unknown };
    if (
      typeof id !== "string" ||
      !CHANNEL_ID.test(id) ||
      typeof name !== "string" ||
      !CHANNEL_NAME.test(name)
    )
      throw new Error(`a channel that is not {id, name}: ${JSON.stringify(c)}`);
    return { id, name };
  });
  if (new Set(channels.map((c) => c.id)).size < channels.length) throw new Error("a channel id twice");
  if (new Set(channels.map((c) => c.name)).size < channels.length) throw new Error("a channel name twice");
  return channels;
}

function parseAhead(text: string): number {
  const ahead = (JSON.parse(text) as { aheadMs?: unknown } | null)?.aheadMs;
  if (typeof ahead !== "number" || !Number.isFinite(ahead) || ahead < 0 || ahead > MAX_AHEAD_MS)
    throw new Error("no offset from 0 to a year in aheadMs");
  return ahead;
}

const reason = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Reads what an earlier console left in `dataDir` (the simulator's part only when `simulated`). */
export function loadConsoleState(dataDir: string, o: { simulated: boolean; seed: number }): SavedConsole {
  const notes: string[] = [];
  const restored: string[] = [];
  let simulator: SimulatorState | undefined;
  let channels: ConsoleChannel[] | undefined;
  let clockAheadMs = 0;
  const channelsText = readText(dataDir, FILES.channels);
  if (channelsText !== undefined) {
    try {
      channels = parseChannels(channelsText);
      restored.push(`${channels.length} channel${channels.length === 1 ? "" : "s"}`);
    } catch (err) {
      notes.push(freshNote(FILES.channels, reason(err)));
    }
  }
  if (o.simulated) {
    const clockText = readText(dataDir, FILES.clock);
    if (clockText !== undefined) {
      try {
        clockAheadMs = parseAhead(clockText);
        if (clockAheadMs > 0) restored.push(`the time ${Math.round(clockAheadMs / 60_000)} min ahead`);
      } catch (err) {
        notes.push(freshNote(FILES.clock, reason(err)));
      }
    }
    const simText = readText(dataDir, FILES.simulator);
    if (simText !== undefined) {
      try {
        simulator = restoreState(simText, o.seed, Date.now() + clockAheadMs);
        restored.push("the simulator's state");
      } catch (err) {
        notes.push(freshNote(FILES.simulator, reason(err)));
      }
    }
  }
  return { simulator, channels, clockAheadMs, notes, restored: restored.join(", ") };
}

export interface ConsoleSaverParts {
  dataDir: string;
  clock: Clock;
  channels: () => readonly ConsoleChannel[];
  simulator?: (() => SimulatorState) | undefined;
  clockAheadMs?: (() => number) | undefined;
  /** Told when a file cannot be written (once per file until it can be again). */
  warn: (line: string) => void;
}

/** Writes the console's files shortly after a change (`saveSoon`) and at the end (`saveNow`). */
export class ConsoleSaver {
  private cancelTimer: Cancel | undefined;
  private readonly written = new Map<string, string>();
  private readonly failing = new Set<string>();

  constructor(private readonly parts: ConsoleSaverParts) {}

  saveSoon(): void {
    if (this.cancelTimer !== undefined) return;
    this.cancelTimer = this.parts.clock.setTimeout(() => {
      this.cancelTimer = undefined;
      this.saveNow();
    }, SAVE_AFTER_MS);
  }

  saveNow(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    const p = this.parts;
    this.write(FILES.channels, JSON.stringify({ channels: p.channels() }, null, 1));
    if (p.simulator) this.write(FILES.simulator, saveState(p.simulator()));
    if (p.clockAheadMs) this.write(FILES.clock, JSON.stringify({ aheadMs: p.clockAheadMs() }));
  }

  private write(file: string, text: string): void {
    if (this.written.get(file) === text) return;
    const path = join(this.parts.dataDir, file);
    const temporary = `${path}.${process.pid}.tmp`;
    try {
      writeFileSync(temporary, text);
      renameSync(temporary, path);
      this.written.set(file, text);
      this.failing.delete(file);
    } catch (err) {
      if (!this.failing.has(file))
        this.parts.warn(
          `Could not save ${file} in DATA_DIR (${reason(err)}); it is tried again at the next change.`,
        );
      this.failing.add(file);
    }
  }
}
