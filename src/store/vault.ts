import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type Config, slackCredentialsSet } from "../config.js";
import type { Logger } from "../log.js";
import {
  decodeMasterKey,
  decrypt,
  derivedKeyId,
  encrypt,
  envelopeKeyId,
  type MasterKeyRing,
  parseMasterKeys,
  ringOf,
} from "./crypto.js";
import { StoreError } from "./errors.js";

export type SecretPurpose = "edge_api_key" | "installation" | "function_token";

/** Seals and opens secrets bound to a workspace and a purpose. Holds the master keys; never logs them. */
export class Vault {
  readonly #ring: MasterKeyRing;

  constructor(ring: MasterKeyRing) {
    this.#ring = ring;
  }

  /** The id of the master key new secrets are sealed with. */
  get currentKeyId(): string {
    return this.#ring.primary.id;
  }

  get keyIds(): readonly string[] {
    return this.#ring.keys.map((k) => k.id);
  }

  seal(teamId: string, purpose: SecretPurpose, plaintext: string): string {
    return encrypt(this.#ring, { teamId, purpose }, plaintext);
  }

  /** Throws StoreError("decrypt_failed") naming the workspace (never the secret). */
  open(teamId: string, purpose: SecretPurpose, envelope: string): string {
    return decrypt(this.#ring, { teamId, purpose }, envelope);
  }

  /** True when the envelope is sealed with the current master key. */
  isCurrent(envelope: string): boolean {
    return envelopeKeyId(envelope) === this.#ring.primary.id;
  }

  toString(): string {
    return `Vault(${this.keyIds.join(",")})`;
  }

  toJSON(): unknown {
    return { keyIds: this.keyIds };
  }
}

export const MASTER_KEY_FILE = "master.key";

/**
 * ENCRYPTION_KEY / ENCRYPTION_KEYS; otherwise, for the local console only (no Slack credential set, not
 * production), DATA_DIR/master.key (generated with mode 0600 on first start, with a warning). A deployment
 * that talks to Slack, or runs in production, without either variable: StoreError("master_key").
 */
export async function resolveMasterKeys(config: Config, logger: Logger): Promise<MasterKeyRing> {
  const ring = parseMasterKeys(config.store);
  if (ring) return ring;
  const file = join(config.store.dataDir, MASTER_KEY_FILE);
  const slackVars = slackCredentialsSet(config);
  if (config.production || slackVars.length > 0) {
    const why =
      slackVars.length > 0 ? `Slack credentials are set (${slackVars.join(", ")})` : "NODE_ENV is production";
    const consoleKey = existsSync(file)
      ? ` ${file} belongs to the local console and is not used here: to keep reading what it sealed, set ENCRYPTION_KEY to its content.`
      : "";
    throw new StoreError(
      "master_key",
      `ENCRYPTION_KEY is not set: ${why}, so edgeops needs its master key from the environment. Set ENCRYPTION_KEY to base64 of 32 random bytes (\`openssl rand -base64 32\`), or ENCRYPTION_KEYS (id:base64,...), and keep it out of the database's backups.${consoleKey}`,
    );
  }
  let text: string | undefined;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    if ((e as { code?: string }).code !== "ENOENT") {
      throw new StoreError(
        "master_key",
        `Cannot read the development master key ${file}: ${(e as Error).message}`,
        {
          cause: e,
        },
      );
    }
  }
  if (text !== undefined) {
    const key = decodeMasterKey(file, text);
    logger.warn(
      { file },
      `ENCRYPTION_KEY is not set; using the development master key in ${file}. Set ENCRYPTION_KEY in production.`,
    );
    return ringOf([{ id: derivedKeyId(key), key }]);
  }
  const { randomBytes } = await import("node:crypto");
  const key = randomBytes(32);
  try {
    await mkdir(config.store.dataDir, { recursive: true });
    // "wx": never overwrite a key another process wrote a moment ago.
    await writeFile(file, `${key.toString("base64")}\n`, { mode: 0o600, flag: "wx" });
    await chmod(file, 0o600);
  } catch (e) {
    if ((e as { code?: string }).code === "EEXIST") return resolveMasterKeys(config, logger);
    throw new StoreError(
      "master_key",
      `Cannot write the development master key ${file}: ${(e as Error).message}`,
      {
        cause: e,
      },
    );
  }
  logger.warn(
    { file },
    `ENCRYPTION_KEY is not set; generated a new development master key into ${file} (mode 0600). Back it up: secrets stored with it cannot be read without it. Set ENCRYPTION_KEY in production.`,
  );
  return ringOf([{ id: derivedKeyId(key), key }]);
}
