import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { StoreError } from "./errors.js";

/**
 * AES-256-GCM envelopes for secrets at rest.
 *
 * Format: `v1:<keyId>:<nonce b64url>:<ciphertext b64url>:<tag b64url>`; the additional authenticated
 * data is `${teamId}:${purpose}`, so an envelope copied into another workspace's row (or used for
 * another purpose) fails to decrypt.
 */

export interface MasterKey {
  readonly id: string;
  readonly key: Buffer;
}

/** The first key encrypts; every key decrypts. */
export interface MasterKeyRing {
  readonly primary: MasterKey;
  readonly keys: readonly MasterKey[];
}

export interface SecretContext {
  readonly teamId: string;
  readonly purpose: string;
}

const VERSION = "v1";
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ID = /^[A-Za-z0-9_.-]{1,32}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

function masterKeyError(message: string): StoreError {
  return new StoreError("master_key", message);
}

/** Decode a base64 (or base64url) master key; the value itself never appears in an error. */
export function decodeMasterKey(variable: string, text: string): Buffer {
  const t = text.trim();
  if (!(BASE64.test(t) || BASE64URL.test(t)) || t.length === 0) {
    throw masterKeyError(`${variable} must be base64 of exactly 32 bytes (the value is not valid base64)`);
  }
  const key = Buffer.from(t, BASE64.test(t) ? "base64" : "base64url");
  if (key.length !== 32) {
    throw masterKeyError(
      `${variable} must be base64 of exactly 32 bytes (it decodes to ${key.length} bytes); generate one with: openssl rand -base64 32`,
    );
  }
  return key;
}

/** A stable id for a key given without one (ENCRYPTION_KEY, master.key): a short hash prefix. */
export function derivedKeyId(key: Buffer): string {
  return `k${createHash("sha256").update("edgeops-master-key-id").update(key).digest("hex").slice(0, 8)}`;
}

export function ringOf(keys: readonly MasterKey[]): MasterKeyRing {
  const primary = keys[0];
  if (!primary) throw masterKeyError("No master key configured");
  return { primary, keys };
}

/**
 * Parse ENCRYPTION_KEY (base64 of 32 bytes) or ENCRYPTION_KEYS (`id:base64,id:base64`, the first
 * encrypts). Returns undefined when neither is set. Throws StoreError("master_key") naming the variable.
 */
export function parseMasterKeys(input: {
  encryptionKey?: string | undefined;
  encryptionKeys?: string | undefined;
}): MasterKeyRing | undefined {
  const single = input.encryptionKey?.trim() || undefined;
  const multi = input.encryptionKeys?.trim() || undefined;
  if (single && multi) {
    throw masterKeyError(
      "Set only one of ENCRYPTION_KEY or ENCRYPTION_KEYS (to rotate, list every key in ENCRYPTION_KEYS, newest first)",
    );
  }
  if (single) {
    const key = decodeMasterKey("ENCRYPTION_KEY", single);
    return ringOf([{ id: derivedKeyId(key), key }]);
  }
  if (!multi) return undefined;
  const keys: MasterKey[] = [];
  const entries = multi
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const [i, entry] of entries.entries()) {
    const colon = entry.indexOf(":");
    if (colon <= 0) {
      throw masterKeyError(
        `ENCRYPTION_KEYS entry ${i + 1} must look like id:base64 (ids are letters, digits, _ . -)`,
      );
    }
    const id = entry.slice(0, colon);
    if (!KEY_ID.test(id)) {
      throw masterKeyError(
        `ENCRYPTION_KEYS entry ${i + 1} has an invalid id (use 1-32 letters, digits, _ . -)`,
      );
    }
    if (keys.some((k) => k.id === id)) throw masterKeyError(`ENCRYPTION_KEYS lists the id "${id}" twice`);
    keys.push({ id, key: decodeMasterKey(`ENCRYPTION_KEYS (id "${id}")`, entry.slice(colon + 1)) });
  }
  if (keys.length === 0) throw masterKeyError("ENCRYPTION_KEYS is set but lists no keys");
  return ringOf(keys);
}

function aadOf(ctx: SecretContext): Buffer {
  return Buffer.from(`${ctx.teamId}:${ctx.purpose}`, "utf8");
}

export function encrypt(ring: MasterKeyRing, ctx: SecretContext, plaintext: string): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv("aes-256-gcm", ring.primary.key, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(aadOf(ctx));
  const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [
    VERSION,
    ring.primary.id,
    nonce.toString("base64url"),
    ct.toString("base64url"),
    tag.toString("base64url"),
  ].join(":");
}

/** The id of the master key an envelope was sealed with, or undefined when it is not an envelope. */
export function envelopeKeyId(envelope: string): string | undefined {
  const parts = envelope.split(":");
  return parts.length === 5 && parts[0] === VERSION ? parts[1] : undefined;
}

const PURPOSE_NAMES: Record<string, string> = {
  edge_api_key: "Edge API key",
  installation: "Slack installation",
  function_token: "workflow step token",
};

function decryptError(ctx: SecretContext, why: string): StoreError {
  const what = PURPOSE_NAMES[ctx.purpose] ?? `secret (${ctx.purpose})`;
  return new StoreError(
    "decrypt_failed",
    `Could not decrypt the stored ${what} for workspace ${ctx.teamId}: ${why}`,
    {
      teamId: ctx.teamId,
    },
  );
}

function tryKey(key: Buffer, ctx: SecretContext, nonce: Buffer, ct: Buffer, tag: Buffer): string | undefined {
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, nonce, { authTagLength: TAG_BYTES });
    decipher.setAAD(aadOf(ctx));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ct), decipher.final()]).toString("utf8");
  } catch {
    return undefined;
  }
}

/**
 * Open an envelope. Tries the key named in it first, then the others (GCM authenticates, so a wrong
 * key cannot produce a wrong plaintext). Throws StoreError("decrypt_failed") naming the workspace.
 */
export function decrypt(ring: MasterKeyRing, ctx: SecretContext, envelope: string): string {
  const parts = envelope.split(":");
  if (parts.length !== 5 || parts[0] !== VERSION) {
    throw decryptError(ctx, "the stored value is not in a known format (corrupted?)");
  }
  const [, keyId, n, c, t] = parts as [string, string, string, string, string];
  const nonce = Buffer.from(n, "base64url");
  const ct = Buffer.from(c, "base64url");
  const tag = Buffer.from(t, "base64url");
  if (nonce.length !== NONCE_BYTES || tag.length !== TAG_BYTES) {
    throw decryptError(ctx, "the stored value is truncated or corrupted");
  }
  const named = ring.keys.find((k) => k.id === keyId);
  const order = named ? [named, ...ring.keys.filter((k) => k !== named)] : ring.keys;
  for (const k of order) {
    const plain = tryKey(k.key, ctx, nonce, ct, tag);
    if (plain !== undefined) return plain;
  }
  throw decryptError(
    ctx,
    named
      ? "the stored value is corrupted or belongs to another workspace"
      : `it was encrypted with master key "${keyId}", which is not configured (or the value is corrupted)`,
  );
}

/** What may be shown about a secret: "…" and its last four characters. */
export function fingerprintOf(secret: string): string {
  return `…${secret.slice(-4)}`;
}
