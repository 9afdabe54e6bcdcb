import { describe, expect, it } from "vitest";
import { createLogger } from "../src/log.js";
import { LogCapture } from "./support/harness.js";

function capture() {
  const sink = new LogCapture();
  return { logger: createLogger({ level: "trace", destination: sink }), sink };
}

describe("the root logger", () => {
  it("writes JSON lines and child loggers carry their context", () => {
    const { logger, sink } = capture();
    logger.child({ teamId: "T1", userId: "U1" }).info({ subcommand: "apps" }, "command answered");
    const line = JSON.parse(sink.lines[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({
      level: "info",
      teamId: "T1",
      userId: "U1",
      subcommand: "apps",
      msg: "command answered",
    });
  });

  it("redacts the AccessKey header and anything named key, secret or token, at any depth", () => {
    const { logger, sink } = capture();
    logger.info(
      {
        headers: { AccessKey: "edge-key-123456", accept: "application/json" },
        apiKey: "edge-key-123456",
        slack: {
          botToken: "xoxb-1-secret",
          signingSecret: "sign-secret-1",
          nested: [{ client_secret: "cs-1" }],
        },
        fingerprint: "…3456",
      },
      "request",
    );
    const text = sink.text;
    for (const secret of ["edge-key-123456", "xoxb-1-secret", "sign-secret-1", "cs-1"])
      expect(text).not.toContain(secret);
    expect(text).toContain("…3456");
    expect(text).toContain("application/json");
  });

  it("redacts Slack tokens and key=value secrets inside free text", () => {
    const { logger, sink } = capture();
    logger.debug("http request body: client_secret=abc123&code=oauth-code-9 token xoxb-2222-abcdef");
    logger.debug({ body: '{"token":"xoxp-3333-zzzzzz","AccessKey":"edge-key-777"}' }, "raw");
    const text = sink.text;
    for (const secret of ["abc123", "oauth-code-9", "xoxb-2222-abcdef", "xoxp-3333-zzzzzz", "edge-key-777"]) {
      expect(text).not.toContain(secret);
    }
  });

  it("redacts an agent's token wherever it appears in text", () => {
    const { logger, sink } = capture();
    const token = "edgeops_at_Q2xhdWRlLXRva2VuLWZvci10ZXN0cy1vbmx5LTAwMDAwMDAwMDA";
    logger.warn(`agent sent Bearer ${token} twice`);
    logger.warn({ header: `Bearer ${token}`, url: `/mcp?t=${token}` }, "refused");
    expect(sink.text).not.toContain(token.slice(11));
  });
});
