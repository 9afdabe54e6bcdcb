import { describe, expect, it } from "vitest";
import { UserError } from "../../src/errors.js";
import { accessEntryOf, parseAccessEntry } from "../../src/services/access-entries.js";

/** The sentence a bad entry gets (and that it is a UserError, never a crash). */
function refusal(word: string | undefined): string {
  try {
    parseAccessEntry(word);
  } catch (err) {
    expect(err).toBeInstanceOf(UserError);
    return (err as UserError).message;
  }
  throw new Error(`${word} was accepted`);
}

describe("parseAccessEntry: what /edge block accepts, in one canonical spelling", () => {
  it.each([
    ["203.0.113.7", "ip", "203.0.113.7"],
    ["2001:DB8:0:0:0:0:0:1", "ip", "2001:db8::1"],
    ["::ffff:192.0.2.1", "ip", "::ffff:c000:201"],
    ["203.0.113.0/24", "cidr", "203.0.113.0/24"],
    ["10.0.0.0/8", "cidr", "10.0.0.0/8"],
    ["198.51.100.7/32", "cidr", "198.51.100.7/32"],
    ["2001:db8:abcd::/48", "cidr", "2001:db8:abcd::/48"],
    ["2001:0DB8::/32", "cidr", "2001:db8::/32"],
    ["AS4134", "asn", "AS4134"],
    ["as015169", "asn", "AS15169"],
    ["AS4294967295", "asn", "AS4294967295"],
    ["cn", "country", "CN"],
    ["AS", "country", "AS"], // American Samoa, not an ASN
    ["T13D1516H2_8DAAF6152771_B186095E22B6", "ja4", "t13d1516h2_8daaf6152771_b186095e22b6"],
    ["q13i0310h3_55b375c5d22e_cd85d2d88918", "ja4", "q13i0310h3_55b375c5d22e_cd85d2d88918"],
  ])("%s", (word, type, value) => {
    expect(parseAccessEntry(word)).toEqual({ type, value });
  });

  it.each([
    [undefined, "What should be blocked?"],
    ["", "What should be blocked?"],
    ["203.0.113.300", "not a valid IP address"],
    ["203.0.113", "not a valid IP address"],
    ["203.000.113.7", "not a valid IP address"],
    ["2001:db8::g", "not a valid IP address"],
    ["fe80::1%eth0", "not a valid IP address"],
    ["203.0.113.0/33", "prefix length"],
    ["203.0.113.0/", "prefix length"],
    ["203.0.113.0/x", "prefix length"],
    ["2001:db8::/129", "prefix length"],
    ["10.0.0.0/4", "too wide"],
    ["::/0", "too wide"],
    ["203.0.113.7/24", "did you mean 203.0.113.0/24"],
    ["2001:db8::1/64", "did you mean 2001:db8::/64"],
    ["not-an-ip/24", "not an IP range"],
    ["AS0", "from 1 to 4294967295"],
    ["AS4294967296", "from 1 to 4294967295"],
    ["AS99999999999", "from 1 to 4294967295"],
    ["4134", "write an ASN with AS in front, like AS4134"],
    ["XX", "not an ISO 3166-1 country code"],
    ["UK", "not an ISO 3166-1 country code"],
    ["t13d1516h2_8daaf6152771", "not a JA4 fingerprint"],
    ["x13d1516h2_8daaf6152771_b186095e22b6", "not a JA4 fingerprint"],
    ["t13d1516h2_8daaf615277g_b186095e22b6", "not a JA4 fingerprint"],
    ["China", "is not an IP, IP range, ASN"],
    ["<!here>", "is not an IP, IP range, ASN"],
    ["a".repeat(101), "too long"],
  ])("refuses %s with a sentence and an example", (word, says) => {
    const sentence = refusal(word);
    expect(sentence).toContain(says);
    expect(sentence).toContain("For example: /edge block ");
  });

  it("accessEntryOf: a value from the API of the expected type, or undefined (never throws)", () => {
    expect(accessEntryOf("AS4134", "asn")).toEqual({ type: "asn", value: "AS4134" });
    expect(accessEntryOf("AS4134", "country")).toBeUndefined();
    expect(accessEntryOf("AS4134 Chinanet", "asn")).toBeUndefined();
    expect(accessEntryOf("<!here> x", "ip")).toBeUndefined();
  });
});
