import { BlockList, isIPv4, isIPv6 } from "node:net";
import { usage } from "../errors.js";

/**
 * What `/edge block` accepts, checked before any call: an IP address, a CIDR range, an ASN, a country
 * code or a JA4 fingerprint, each in one canonical spelling (so the same entry is never listed twice
 * under two spellings, and "is it in the list?" is a string comparison).
 */

export const ACCESS_ENTRY_TYPES = ["ip", "cidr", "asn", "country", "ja4"] as const;
export type AccessEntryType = (typeof ACCESS_ENTRY_TYPES)[number];

export interface AccessEntry {
  type: AccessEntryType;
  value: string;
}

export const BLOCK_EXAMPLE = "/edge block 1234 203.0.113.7";
/** What each type looks like, after `/edge block 1234` (or `/edge unblock 1234`). */
const SAMPLES: Record<AccessEntryType, string> = {
  ip: "203.0.113.7",
  cidr: "203.0.113.0/24",
  asn: "AS4134",
  country: "CN",
  ja4: "t13d1516h2_8daaf6152771_b186095e22b6",
};

/** The command an entry is typed for: its examples and its question use its own verb. */
export type AccessCommand = "block" | "unblock";

/** How an entry type is named in sentences and in edgeops' list names. */
export const ENTRY_TYPE_WORDS: Record<AccessEntryType, { one: string; many: string }> = {
  ip: { one: "IP", many: "IPs" },
  cidr: { one: "IP range", many: "IP ranges" },
  asn: { one: "ASN", many: "ASNs" },
  country: { one: "country", many: "countries" },
  ja4: { one: "JA4 fingerprint", many: "JA4 fingerprints" },
};

/** Narrower ranges than these would block (or challenge) a large part of the internet by mistake. */
export const MIN_PREFIX = { v4: 8, v6: 16 } as const;

/** ISO 3166-1 alpha-2: the officially assigned codes. */
const COUNTRY_CODES = new Set(
  (
    "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW " +
    "BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI " +
    "FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN " +
    "IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME " +
    "MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF " +
    "PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV " +
    "SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE " +
    "YT ZA ZM ZW"
  ).split(" "),
);

export const isCountryCode = (s: string): boolean => COUNTRY_CODES.has(s);

/**
 * JA4: protocol (t TCP, q QUIC, d DTLS), TLS version, SNI (d domain, i IP), cipher and extension counts,
 * the ALPN's first and last characters; then two 12-hex-digit hashes.
 */
const JA4 = /^[tqd](?:1[0-3]|s[23]|d[1-3]|00)[di]\d{2}\d{2}[0-9a-z]{2}_[0-9a-f]{12}_[0-9a-f]{12}$/;

/** The canonical (compressed, lower-case) spelling of an IPv6 address. */
function canonicalIpv6(s: string): string {
  return new URL(`http://[${s}]/`).hostname.slice(1, -1);
}

function ipv4ToInt(s: string): number {
  return s.split(".").reduce((n, part) => n * 256 + Number(part), 0);
}

function intToIpv4(n: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join(".");
}

function ipv6ToBigInt(s: string): bigint {
  const [head = "", tail] = s.split("::");
  const groups = (part: string) => (part === "" ? [] : part.split(":"));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = [...left, ...Array(8 - left.length - right.length).fill("0"), ...right];
  return all.reduce((n, g) => (n << 16n) + BigInt(Number.parseInt(g, 16)), 0n);
}

function bigIntToIpv6(n: bigint): string {
  const groups = Array.from({ length: 8 }, (_, i) => ((n >> BigInt(16 * (7 - i))) & 0xffffn).toString(16));
  return canonicalIpv6(groups.join(":"));
}

/** The network address of `ip/prefix` (host bits cleared). */
function networkOf(ip: string, prefix: number, v6: boolean): string {
  if (v6) {
    const hostBits = BigInt(128 - prefix);
    return bigIntToIpv6((ipv6ToBigInt(ip) >> hostBits) << hostBits);
  }
  const size = 2 ** (32 - prefix);
  return intToIpv4(Math.floor(ipv4ToInt(ip) / size) * size);
}

function parseCidr(raw: string, command: AccessCommand): AccessEntry {
  const example = `/edge ${command} 1234 ${SAMPLES.cidr}`;
  const [addr = "", prefixText = ""] = raw.split("/");
  const v6 = isIPv6(addr) && !addr.includes("%");
  if (!v6 && !isIPv4(addr))
    throw usage(
      `"${raw}" is not an IP range: give an IPv4 or IPv6 network and a prefix length. For example: ${example}`,
    );
  const max = v6 ? 128 : 32;
  const min = v6 ? MIN_PREFIX.v6 : MIN_PREFIX.v4;
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max)
    throw usage(`The prefix length after / must be a number from ${min} to ${max}. For example: ${example}`);
  const prefix = Number(prefixText);
  if (prefix < min)
    throw usage(
      `/${prefix} is too wide a range to block from Slack (at least /${min} for ${v6 ? "IPv6" : "IPv4"}): narrow it. For example: ${example}`,
    );
  const ip = v6 ? canonicalIpv6(addr) : addr;
  const network = networkOf(ip, prefix, v6);
  if (network !== ip)
    throw usage(
      `${raw} has bits set after the first ${prefix}: did you mean ${network}/${prefix}? For example: ${example}`,
    );
  return { type: "cidr", value: `${network}/${prefix}` };
}

/**
 * One entry as a user typed it, in its canonical spelling, or a UserError whose sentence says what is
 * accepted, with an example.
 */
export function parseAccessEntry(word: string | undefined, command: AccessCommand = "block"): AccessEntry {
  const example = (type: AccessEntryType = "ip") => `/edge ${command} 1234 ${SAMPLES[type]}`;
  if (word === undefined || word.trim() === "")
    throw usage(
      `What should be ${command}ed? An IP, an IP range, an ASN (AS4134), a country code (CN) or a JA4 fingerprint. For example: ${example()}`,
    );
  const raw = word.trim();
  if (raw.length > 100)
    throw usage(
      `That is too long for an IP, ASN, country code or JA4 fingerprint. For example: ${example()}`,
    );
  if (raw.includes("/")) return parseCidr(raw, command);
  if (isIPv4(raw)) return { type: "ip", value: raw };
  if (isIPv6(raw) && !raw.includes("%")) return { type: "ip", value: canonicalIpv6(raw) };
  if ((/^[\d.]+$/.test(raw) && raw.includes(".")) || raw.includes(":"))
    throw usage(`"${raw}" is not a valid IP address. For example: ${example("ip")}`);
  const asn = /^as(\d+)$/i.exec(raw);
  if (asn) {
    const n = Number(asn[1]);
    if (asn[1]!.length > 10 || !Number.isSafeInteger(n) || n < 1 || n > 4_294_967_295)
      throw usage(`An ASN is AS followed by a number from 1 to 4294967295. For example: ${example("asn")}`);
    return { type: "asn", value: `AS${n}` };
  }
  if (/^\d+$/.test(raw))
    throw usage(
      `A bare number is ambiguous: write an ASN with AS in front, like AS${raw}. For example: ${example("asn")}`,
    );
  if (/^[a-z]{2}$/i.test(raw)) {
    const code = raw.toUpperCase();
    if (!isCountryCode(code))
      throw usage(
        `${code} is not an ISO 3166-1 country code (two letters, like CN, RU or US). For example: ${example("country")}`,
      );
    return { type: "country", value: code };
  }
  if (raw.includes("_")) {
    const ja4 = raw.toLowerCase();
    if (!JA4.test(ja4))
      throw usage(
        `"${raw}" is not a JA4 fingerprint: it looks like t13d1516h2_8daaf6152771_b186095e22b6 (a 10-character prefix, then two 12-hex-digit parts). For example: ${example("ja4")}`,
      );
    return { type: "ja4", value: ja4 };
  }
  throw usage(
    `"${raw}" is not an IP, IP range, ASN (AS4134), country code (CN) or JA4 fingerprint. For example: ${example()}`,
  );
}

/** Address ranges no internet client comes from, by what they are called in a warning. */
const NON_INTERNET_RANGES: readonly {
  readonly what: NonInternetAddress;
  readonly network: string;
  readonly prefix: number;
  readonly family: "ipv4" | "ipv6";
}[] = [
  { what: "private", network: "10.0.0.0", prefix: 8, family: "ipv4" },
  { what: "private", network: "172.16.0.0", prefix: 12, family: "ipv4" },
  { what: "private", network: "192.168.0.0", prefix: 16, family: "ipv4" },
  { what: "private", network: "fc00::", prefix: 7, family: "ipv6" },
  { what: "loopback", network: "127.0.0.0", prefix: 8, family: "ipv4" },
  { what: "loopback", network: "::1", prefix: 128, family: "ipv6" },
  { what: "link-local", network: "169.254.0.0", prefix: 16, family: "ipv4" },
  { what: "link-local", network: "fe80::", prefix: 10, family: "ipv6" },
];

export type NonInternetAddress = "private" | "loopback" | "link-local";

function listOf(network: string, prefix: number, family: "ipv4" | "ipv6"): BlockList {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return list;
}

/**
 * Whether an IP or IP range (canonical, as parseAccessEntry gives it) is, or reaches into, addresses no
 * internet client has: private (RFC 1918, fc00::/7), loopback or link-local; with the range it meets.
 * Blocking one on a shield zone most likely hits a proxy in front of the zone, or is a mistake. Undefined
 * for any other entry.
 */
export function nonInternetAddress(
  entry: AccessEntry,
): { what: NonInternetAddress; range: string } | undefined {
  if (entry.type !== "ip" && entry.type !== "cidr") return undefined;
  const [address = "", prefixText] = entry.value.split("/");
  const family = isIPv6(address) ? "ipv6" : "ipv4";
  const prefix = prefixText === undefined ? (family === "ipv6" ? 128 : 32) : Number(prefixText);
  const typed = listOf(address, prefix, family);
  // The entry starts inside such a range, or such a range starts inside the entry.
  const hit = NON_INTERNET_RANGES.find(
    (r) => listOf(r.network, r.prefix, r.family).check(address, family) || typed.check(r.network, r.family),
  );
  return hit && { what: hit.what, range: `${hit.network}/${hit.prefix}` };
}

/** The same check without the sentence: the entry, or undefined (for values from the Edge API). */
export function accessEntryOf(value: string, type?: AccessEntryType): AccessEntry | undefined {
  try {
    const e = parseAccessEntry(value);
    return type === undefined || e.type === type ? e : undefined;
  } catch {
    return undefined;
  }
}
