import { readFileSync } from "node:fs";
import { Ajv, type ValidateFunction } from "ajv";
import { beforeAll, describe, expect, it } from "vitest";
import { parse, parseDocument } from "yaml";
import { DASHBOARD_HOST } from "../src/services/dashboard-links.js";
import { FUNCTIONS, SHORTCUTS } from "../src/slack/ids.js";

// Slack's published manifest schema lives beside the repository (../shared, also in CI); it is read in place,
// never copied into the project. A missing file fails the suite on purpose.
const SCHEMA_DIR = new URL("../../shared/reference/slack-manifest-schema/", import.meta.url);
const MANIFEST_URL = new URL("../manifest.yml", import.meta.url);

/** Bot scopes the bot needs, and no more (see the comments in manifest.yml). */
const EXPECTED_BOT_SCOPES = [
  "channels:read",
  "chat:write",
  "commands",
  "files:write",
  "groups:read",
  "im:write",
  "links:read",
  "links:write",
  "usergroups:read",
  "users:read",
];
const PLACEHOLDER_URL = "https://example.com/slack/events";

type Json = Record<string, unknown>;

interface FunctionDefinition {
  title: string;
  description: string;
  input_parameters: { properties: Record<string, Json>; required?: string[] };
  output_parameters: { properties: Record<string, Json>; required?: string[] };
}

/** A step's input or output parameters in a parsed (mutable) manifest. */
function stepParams(m: Json, id: string, side: "input" | "output"): Record<string, Json> {
  const f = (m.functions as Record<string, FunctionDefinition>)[id]!;
  return f[`${side}_parameters`].properties;
}

function readJson(name: string): Json {
  return JSON.parse(readFileSync(new URL(name, SCHEMA_DIR), "utf8")) as Json;
}

const manifestText = readFileSync(MANIFEST_URL, "utf8");

function loadManifest(): Json {
  return parse(manifestText) as Json;
}

/**
 * Ajv for Slack's schemas: they declare draft-07 (Ajv's default draft, so the plain `ajv` entry), use the
 * non-standard keyword `regex` (for background_color; implemented here so it is really enforced), the
 * annotation `_note`, format `uri` (added here; ajv-formats is not a dependency) and a few constructs that
 * Ajv's strictTypes mode rejects, hence strict: false.
 */
function makeAjv(): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addFormat("uri", (value: string) => URL.canParse(value));
  ajv.addKeyword({
    keyword: "regex",
    type: "string",
    schemaType: "string",
    errors: false,
    validate: (pattern: string, data: string) => new RegExp(pattern).test(data),
  });
  return ajv;
}

function errorsOf(validate: ValidateFunction): string[] {
  return (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.keyword} ${e.message ?? ""}`);
}

/** The version manifest.yml declares (_metadata.major_version 2: functions with { properties, required }). */
let validateV2: ValidateFunction;
let validateAnyVersion: ValidateFunction;

beforeAll(() => {
  const v2 = readJson("manifest.schema.2.0.0.json");
  expect(v2.$schema).toBe("http://json-schema.org/draft-07/schema#");
  validateV2 = makeAjv().compile(v2);

  // manifest.schema.json dispatches on _metadata.major_version to the versioned schemas by remote $id; register
  // the local copies under those ids so nothing is fetched.
  const ajv = makeAjv();
  const base = "https://raw.githubusercontent.com/slackapi/manifest-schema/v0.5.0/schemas/";
  ajv.addSchema(readJson("manifest.schema.1.0.0.json"), `${base}manifest.schema.1.0.0.json`);
  ajv.addSchema(readJson("manifest.schema.2.0.0.json"), `${base}manifest.schema.2.0.0.json`);
  validateAnyVersion = ajv.compile(readJson("manifest.schema.json"));
});

describe("manifest.yml against Slack's manifest schema", () => {
  it("parses as YAML without errors or warnings", () => {
    const doc = parseDocument(manifestText);
    expect(doc.errors).toEqual([]);
    expect(doc.warnings).toEqual([]);
  });

  it("is valid against manifest.schema.2.0.0.json (the major_version it declares)", () => {
    expect((loadManifest()._metadata as Json).major_version).toBe(2);
    const ok = validateV2(loadManifest());
    expect(errorsOf(validateV2)).toEqual([]);
    expect(ok).toBe(true);
  });

  it("is valid against the version-dispatching manifest.schema.json", () => {
    const ok = validateAnyVersion(loadManifest());
    expect(errorsOf(validateAnyVersion)).toEqual([]);
    expect(ok).toBe(true);
  });

  it("the validator accepts the schema repository's own valid example", () => {
    const example = readJson("example-manifest.v1.valid.json");
    expect(validateV2(example)).toBe(true);
    expect(validateAnyVersion(example)).toBe(true);
  });

  const broken: Array<[string, (m: Json) => void, string]> = [
    [
      "a slash command without description",
      (m) => {
        const cmd = (m.features as { slash_commands: Json[] }).slash_commands[0]!;
        delete cmd.description;
      },
      "required",
    ],
    [
      "a slash command name without the leading slash",
      (m) => {
        (m.features as { slash_commands: Json[] }).slash_commands[0]!.command = "edge";
      },
      "pattern",
    ],
    [
      "a background color that is not #rgb/#rrggbb",
      (m) => {
        (m.display_information as Json).background_color = "navy!";
      },
      "regex",
    ],
    [
      "a long_description shorter than 175 characters",
      (m) => {
        (m.display_information as Json).long_description = "too short";
      },
      "minLength",
    ],
    [
      "an unknown settings key (typo)",
      (m) => {
        (m.settings as Json).socket_mode = true;
      },
      "additionalProperties",
    ],
    [
      "a shortcut name longer than Slack's 24 characters",
      (m) => {
        (m.features as { shortcuts: Json[] }).shortcuts[0]!.name = "edgeops: request a change";
      },
      "maxLength",
    ],
    [
      "an unfurl domain with a scheme",
      (m) => {
        (m.features as { unfurl_domains: string[] }).unfurl_domains[0] = "https://dash.bunny.net";
      },
      "pattern",
    ],
    [
      "a non-http options load URL",
      (m) => {
        ((m.settings as Json).interactivity as Json).message_menu_options_url = "slack/events";
      },
      "pattern",
    ],
    [
      "a non-http interactivity URL",
      (m) => {
        ((m.settings as Json).interactivity as Json).request_url = "example.com/slack/events";
      },
      "pattern",
    ],
    [
      "a step's parameter of a type Slack does not have",
      (m) => {
        stepParams(m, "get_zone_status", "input").zone!.type = "domain";
      },
      "enum",
    ],
    [
      "a step without output_parameters",
      (m) => {
        delete (m.functions as Record<string, Json>).get_zone_status!.output_parameters;
      },
      "required",
    ],
    [
      "a step with a key Slack does not know",
      (m) => {
        (m.functions as Record<string, Json>).request_block!.timeout = 60;
      },
      "additionalProperties",
    ],
  ];

  it.each(broken)("rejects a copy with %s", (_label, breakIt, keyword) => {
    const m = loadManifest();
    breakIt(m);
    expect(validateV2(m)).toBe(false);
    expect((validateV2.errors ?? []).map((e) => e.keyword)).toContain(keyword);
    expect(validateAnyVersion(m)).toBe(false);
  });
});

describe("manifest.yml content", () => {
  const m = loadManifest() as {
    display_information: Json;
    features: {
      app_home: Json;
      bot_user: Json;
      slash_commands: Json[];
      shortcuts: Json[];
      unfurl_domains: string[];
    };
    oauth_config: { scopes: Record<string, string[] | undefined>; redirect_urls?: string[] };
    functions: Record<string, FunctionDefinition>;
    settings: {
      function_runtime?: string;
      event_subscriptions: { bot_events: string[]; request_url?: string };
      interactivity: Json;
      socket_mode_enabled: boolean;
      org_deploy_enabled: boolean;
      token_rotation_enabled: boolean;
    };
  };

  it("has the display information", () => {
    expect(m.display_information.name).toBe("edgeops");
    expect(m.display_information.description).toEqual(expect.any(String));
    expect(m.display_information.long_description).toEqual(expect.any(String));
    expect(m.display_information.background_color).toMatch(/^#[0-9a-fA-F]{6}$/);
  });

  it("has an always-online bot user named edgeops", () => {
    expect(m.features.bot_user).toEqual({ display_name: "edgeops", always_online: true });
  });

  it("declares exactly one slash command, /edge, with a description and a usage hint", () => {
    expect(m.features.slash_commands).toHaveLength(1);
    const cmd = m.features.slash_commands[0]!;
    expect(cmd.command).toBe("/edge");
    expect(cmd.description).toEqual(expect.stringMatching(/\S/));
    const hint = cmd.usage_hint as string;
    for (const sub of [
      "status",
      "apps",
      "zones",
      "bots",
      "bot",
      "ratelimit",
      "waf",
      "dns",
      "schedule",
      "policy",
    ]) {
      expect(hint).toMatch(new RegExp(`(^|\\| )${sub}\\b`));
    }
    for (const sub of ["audit", "key", "help"]) expect(hint).toContain(sub);
    expect(cmd.url).toBe(PLACEHOLDER_URL);
  });

  it("requests exactly the minimal bot scopes and no user scopes", () => {
    expect([...(m.oauth_config.scopes.bot ?? [])].sort()).toEqual(EXPECTED_BOT_SCOPES);
    expect(Object.keys(m.oauth_config.scopes)).toEqual(["bot"]);
    expect(m.oauth_config.scopes.bot).not.toContain("chat:write.public");
    expect(m.oauth_config.redirect_urls).toBeUndefined();
  });

  it("justifies every bot scope with a comment on the line before it", () => {
    const lines = manifestText.split("\n");
    for (const scope of EXPECTED_BOT_SCOPES) {
      const at = lines.findIndex((l) => l.trim() === `- ${scope}`);
      expect(at, scope).toBeGreaterThan(0);
      expect(lines[at - 1]!.trim(), scope).toMatch(/^#\s*\S/);
    }
  });

  it("enables the Home tab and subscribes to app_home_opened", () => {
    expect(m.features.app_home.home_tab_enabled).toBe(true);
    expect(m.settings.event_subscriptions.bot_events).toContain("app_home_opened");
  });

  it("declares the shortcuts edgeops listens for, by the callback ids in src/slack/ids.ts", () => {
    expect(m.features.shortcuts).toEqual([
      expect.objectContaining({ type: "global", callback_id: SHORTCUTS.requestChange }),
      expect.objectContaining({ type: "message", callback_id: SHORTCUTS.incidentOverview }),
    ]);
    expect(String(m.features.shortcuts[0]!.description)).toContain("edgeops: request a change");
  });

  it("subscribes to app_uninstalled and tokens_revoked, so a removed workspace is forgotten", () => {
    expect(m.settings.event_subscriptions.bot_events).toEqual(
      expect.arrayContaining(["app_uninstalled", "tokens_revoked"]),
    );
  });

  it("unfurls dash.bunny.net links: the domain, the link_shared event and the links scopes", () => {
    expect(m.features.unfurl_domains).toEqual([DASHBOARD_HOST]);
    expect(m.settings.event_subscriptions.bot_events).toContain("link_shared");
  });

  it("enables interactivity (with the options load URL for pickers), Socket Mode, org deploy (for workflow steps); no token rotation", () => {
    expect(m.settings.interactivity.is_enabled).toBe(true);
    expect(m.settings.interactivity.request_url).toBe(PLACEHOLDER_URL);
    expect(m.settings.interactivity.message_menu_options_url).toBe(PLACEHOLDER_URL);
    expect(m.settings.socket_mode_enabled).toBe(true);
    expect(m.settings.org_deploy_enabled).toBe(true);
    expect(m.settings.token_rotation_enabled).toBe(false);
  });

  it("declares every Workflow Builder step the app registers, run remotely, with function_executed", () => {
    expect(m.settings.function_runtime).toBe("remote");
    expect(m.settings.event_subscriptions.bot_events).toContain("function_executed");
    expect(Object.keys(m.functions).sort()).toEqual(Object.values(FUNCTIONS).sort());
    for (const [id, f] of Object.entries(m.functions)) {
      expect(f.title, id).toMatch(/\S/);
      expect(f.description, id).toMatch(/\S/);
      for (const side of ["input_parameters", "output_parameters"] as const) {
        const props = Object.keys(f[side].properties);
        expect(props.length, `${id} ${side}`).toBeGreaterThan(0);
        // Every required parameter is declared.
        for (const r of f[side].required ?? []) expect(props, `${id} ${side} requires ${r}`).toContain(r);
      }
    }
  });

  it("the two request steps take where the approval goes and who ran the workflow, and report the final state", () => {
    for (const id of [FUNCTIONS.requestBotCategoryChange, FUNCTIONS.requestBlock]) {
      const f = m.functions[id]!;
      expect(f.input_parameters.properties.channel?.type).toBe("slack#/types/channel_id");
      // Filled by Slack with the person who ran the workflow; a user_id would let the author name anyone.
      expect(f.input_parameters.properties.requester?.type).toBe("slack#/types/user_context");
      expect(f.input_parameters.required).toEqual(expect.arrayContaining(["zone", "channel", "requester"]));
      expect(Object.keys(f.output_parameters.properties)).toEqual(
        expect.arrayContaining(["request_id", "final_state", "summary", "decided_by"]),
      );
    }
  });

  it("explains Socket Mode, HTTP mode and OAuth in the header comment", () => {
    const header = manifestText.slice(0, manifestText.search(/^[^#\s]/m));
    expect(header).toMatch(/Socket Mode/);
    expect(header).toContain("socket_mode_enabled to false");
    expect(header).toContain("https://<your-host>/slack/events");
    expect(header).toContain("redirect_urls");
    expect(header).toContain("https://<your-host>/slack/oauth_redirect");
  });
});
