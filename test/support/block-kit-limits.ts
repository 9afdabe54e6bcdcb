/**
 * Slack Block Kit limits, checked the way Slack checks them before answering `invalid_blocks`
 * (chat.postMessage / chat.update / chat.postEphemeral) or `invalid_arguments` (views.open / views.update /
 * views.publish). Used by the fake Slack Web API in tests so that an oversize payload fails in tests the way it
 * fails in production.
 *
 * Pure and defensive: any input (null, wrong types, strings where objects belong, JSON strings for `blocks` or the
 * view as the Web API accepts them form-encoded) yields violations, never an exception.
 *
 * Lengths are counted in Unicode code points, so an emoji counts as one character (as Slack counts them) and a
 * correctly truncated string is never reported.
 */

export type BlockKitSurface = "message" | "modal" | "home";

/** chat.postMessage-style arguments (only the parts that carry Block Kit). */
export interface MessagePayload {
  blocks?: unknown[] | string;
  text?: string;
}

/** A view object as passed to views.open / views.update / views.publish. */
export interface ViewPayload {
  type?: string;
  blocks?: unknown[];
  title?: unknown;
  submit?: unknown;
  close?: unknown;
  callback_id?: string;
  private_metadata?: string;
  [key: string]: unknown;
}

/** Slack's documented limits, by name (characters unless the name says items). */
export const BLOCK_KIT_LIMITS = {
  messageBlocks: 50,
  viewBlocks: 100,
  messageText: 40_000,
  sectionText: 3000,
  sectionFields: 10,
  sectionFieldText: 2000,
  headerText: 150,
  contextElements: 10,
  actionsElements: 25,
  buttonText: 75,
  buttonValue: 2000,
  buttonUrl: 3000,
  actionId: 255,
  blockId: 255,
  callbackId: 255,
  privateMetadata: 3000,
  viewTitle: 24,
  viewSubmit: 24,
  viewClose: 24,
  confirmTitle: 100,
  confirmText: 300,
  confirmButton: 30,
  selectOptions: 100,
  selectOptionGroups: 100,
  optionGroupLabel: 75,
  optionText: 75,
  optionDescription: 75,
  optionValue: 150,
  overflowOptions: 5,
  placeholder: 150,
  inputLabel: 2000,
  inputHint: 2000,
  plainTextInputMaxLength: 3000,
} as const;

const L = BLOCK_KIT_LIMITS;

type Rec = Record<string, unknown>;

function isRecord(v: unknown): v is Rec {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function charCount(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

const INVALID_JSON = Symbol("invalid-json");

/** Accepts an array or a JSON string of an array/object (as the form-encoded Web API does). */
function maybeJson(v: unknown): unknown {
  if (typeof v !== "string") return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return INVALID_JSON;
  }
}

const SELECTS_WITH_OPTIONS = new Set(["static_select", "multi_static_select"]);
const TEXT_TYPES = new Set(["plain_text", "mrkdwn"]);

class Checker {
  readonly violations: string[] = [];
  private readonly blockIds = new Map<string, string>();

  add(path: string, message: string): void {
    this.violations.push(`${path}: ${message}`);
  }

  /** A string no longer than `max`; reports "<what> is N characters, limit max". */
  maxChars(path: string, value: unknown, what: string, max: number): void {
    if (value === undefined) return;
    if (typeof value !== "string") {
      this.add(path, `${what} must be a string`);
      return;
    }
    const n = charCount(value);
    if (n > max) this.add(path, `${what} is ${n} characters, limit ${max}`);
  }

  maxItems(path: string, n: number, what: string, max: number): void {
    if (n > max) this.add(path, `${what} has ${n} items, limit ${max}`);
  }

  /** An array (or absent) of at most `max` items, each checked by `each` at its own path; returns the items. */
  items(
    path: string,
    value: unknown,
    what: string,
    max: number,
    each?: (this: Checker, itemPath: string, item: unknown) => void,
  ): unknown[] {
    const items = this.array(path, value, what);
    this.maxItems(path, items.length, what, max);
    if (each) for (const [i, item] of items.entries()) each.call(this, `${path}[${i}]`, item);
    return items;
  }

  /** An array (or absent when optional); returns the items to walk. */
  array(path: string, value: unknown, what: string): unknown[] {
    if (value === undefined) return [];
    if (!Array.isArray(value)) {
      this.add(path, `${what} must be an array`);
      return [];
    }
    return value;
  }

  /**
   * A composition text object: { type: plain_text | mrkdwn, text: non-empty string }.
   * `only` restricts the type (e.g. header text must be plain_text).
   */
  textObject(path: string, value: unknown, what: string, max: number, only?: "plain_text"): void {
    if (!isRecord(value)) {
      this.add(path, `${what} must be a text object`);
      return;
    }
    const type = value.type;
    if (typeof type !== "string" || !TEXT_TYPES.has(type)) {
      this.add(path, `${what} has an invalid text object type ${JSON.stringify(type) ?? "undefined"}`);
    } else if (only !== undefined && type !== only) {
      this.add(path, `${what} must be ${only}, not ${type}`);
    }
    const text = value.text;
    if (typeof text !== "string") {
      this.add(`${path}.text`, `${what} text must be a string`);
      return;
    }
    if (text.length === 0) {
      this.add(`${path}.text`, `${what} text must not be empty`);
      return;
    }
    const n = charCount(text);
    if (n > max) this.add(path, `${what} is ${n} characters, limit ${max}`);
  }

  blockId(path: string, block: Rec): void {
    const id = block.block_id;
    if (id === undefined) return;
    this.maxChars(`${path}.block_id`, id, "block_id", L.blockId);
    if (typeof id === "string") {
      const first = this.blockIds.get(id);
      if (first !== undefined)
        this.add(`${path}.block_id`, `duplicate block_id ${JSON.stringify(id)} (first at ${first})`);
      else this.blockIds.set(id, path);
    }
  }

  confirm(path: string, value: unknown): void {
    if (value === undefined) return;
    if (!isRecord(value)) {
      this.add(path, "confirm dialog must be an object");
      return;
    }
    this.textObject(`${path}.title`, value.title, "confirm title", L.confirmTitle, "plain_text");
    this.textObject(`${path}.text`, value.text, "confirm text", L.confirmText);
    this.textObject(`${path}.confirm`, value.confirm, "confirm button text", L.confirmButton, "plain_text");
    this.textObject(`${path}.deny`, value.deny, "deny button text", L.confirmButton, "plain_text");
  }

  option(path: string, value: unknown): void {
    if (!isRecord(value)) {
      this.add(path, "option must be an object");
      return;
    }
    this.textObject(`${path}.text`, value.text, "option text", L.optionText);
    if (value.description !== undefined) {
      this.textObject(`${path}.description`, value.description, "option description", L.optionDescription);
    }
    if (typeof value.value !== "string") this.add(`${path}.value`, "option value must be a string");
    else this.maxChars(`${path}.value`, value.value, "option value", L.optionValue);
  }

  element(path: string, value: unknown): void {
    if (!isRecord(value)) {
      this.add(path, "element must be an object");
      return;
    }
    const type = value.type;
    if (typeof type !== "string") {
      this.add(`${path}.type`, "element type must be a string");
      return;
    }
    if (type === "image") return; // context/accessory images carry no interactive limits here
    if (TEXT_TYPES.has(type)) {
      this.textObject(path, value, `${type} element`, L.sectionText);
      return;
    }
    this.maxChars(`${path}.action_id`, value.action_id, "action_id", L.actionId);
    this.confirm(`${path}.confirm`, value.confirm);
    if (value.placeholder !== undefined) {
      this.textObject(`${path}.placeholder`, value.placeholder, "placeholder", L.placeholder, "plain_text");
    }
    switch (type) {
      case "button":
        this.textObject(`${path}.text`, value.text, "button text", L.buttonText, "plain_text");
        this.maxChars(`${path}.value`, value.value, "button value", L.buttonValue);
        this.maxChars(`${path}.url`, value.url, "button url", L.buttonUrl);
        break;
      case "overflow":
        this.items(`${path}.options`, value.options, "overflow options", L.overflowOptions, this.option);
        break;
      case "plain_text_input": {
        const max = value.max_length;
        if (max !== undefined) {
          if (typeof max !== "number" || !Number.isInteger(max) || max < 1) {
            this.add(`${path}.max_length`, "plain_text_input max_length must be a positive integer");
          } else if (max > L.plainTextInputMaxLength) {
            this.add(
              `${path}.max_length`,
              `plain_text_input max_length is ${max}, limit ${L.plainTextInputMaxLength}`,
            );
          }
        }
        break;
      }
      default:
        if (SELECTS_WITH_OPTIONS.has(type)) this.selectOptions(path, value);
    }
  }

  selectOptions(path: string, value: Rec): void {
    this.items(`${path}.options`, value.options, "select options", L.selectOptions, this.option);
    this.items(
      `${path}.option_groups`,
      value.option_groups,
      "option groups",
      L.selectOptionGroups,
      (gp, g) => {
        if (!isRecord(g)) {
          this.add(gp, "option group must be an object");
          return;
        }
        this.textObject(`${gp}.label`, g.label, "option group label", L.optionGroupLabel, "plain_text");
        this.items(`${gp}.options`, g.options, "option group options", L.selectOptions, this.option);
      },
    );
    if (value.options === undefined && value.option_groups === undefined) {
      this.add(path, `${String(value.type)} needs options or option_groups`);
    }
  }

  block(path: string, value: unknown): void {
    if (!isRecord(value)) {
      this.add(path, "block must be an object");
      return;
    }
    this.blockId(path, value);
    const type = value.type;
    switch (type) {
      case "section": {
        const hasText = value.text !== undefined;
        const hasFields = value.fields !== undefined;
        if (!hasText && !hasFields) this.add(path, "section needs text or fields");
        if (hasText) this.textObject(`${path}.text`, value.text, "section text", L.sectionText);
        this.items(`${path}.fields`, value.fields, "section fields", L.sectionFields, (p, item) =>
          this.textObject(p, item, "section field", L.sectionFieldText),
        );
        if (value.accessory !== undefined) this.element(`${path}.accessory`, value.accessory);
        break;
      }
      case "header":
        this.textObject(`${path}.text`, value.text, "header text", L.headerText, "plain_text");
        break;
      case "context":
        this.items(`${path}.elements`, value.elements, "context elements", L.contextElements, this.element);
        break;
      case "actions": {
        const elements = this.items(
          `${path}.elements`,
          value.elements,
          "actions elements",
          L.actionsElements,
        );
        const seen = new Map<string, number>();
        elements.forEach((e, i) => {
          const ep = `${path}.elements[${i}]`;
          this.element(ep, e);
          const id = isRecord(e) ? e.action_id : undefined;
          if (typeof id === "string") {
            const first = seen.get(id);
            if (first !== undefined) {
              this.add(
                `${ep}.action_id`,
                `duplicate action_id ${JSON.stringify(id)} in actions block (first at elements[${first}])`,
              );
            } else seen.set(id, i);
          }
        });
        break;
      }
      case "input":
        this.textObject(`${path}.label`, value.label, "input label", L.inputLabel, "plain_text");
        if (value.hint !== undefined)
          this.textObject(`${path}.hint`, value.hint, "input hint", L.inputHint, "plain_text");
        if (value.element === undefined) this.add(`${path}.element`, "input block needs an element");
        else this.element(`${path}.element`, value.element);
        break;
      default:
        if (typeof type !== "string") this.add(`${path}.type`, "block type must be a string");
    }
  }

  blocks(raw: unknown, max: number, surface: string): unknown[] {
    const parsed = maybeJson(raw);
    if (parsed === INVALID_JSON) {
      this.add("blocks", "blocks is not valid JSON");
      return [];
    }
    const blocks = this.array("blocks", parsed, "blocks");
    this.maxItems("blocks", blocks.length, `${surface} blocks`, max);
    for (const [i, b] of blocks.entries()) this.block(`blocks[${i}]`, b);
    return blocks;
  }
}

function checkMessage(c: Checker, payload: unknown): void {
  if (!isRecord(payload)) {
    c.add("payload", "message payload must be an object");
    return;
  }
  c.maxChars("text", payload.text, "message text", L.messageText);
  c.blocks(payload.blocks, L.messageBlocks, "message");
}

function checkView(c: Checker, surface: "modal" | "home", payload: unknown): void {
  const view = maybeJson(payload);
  if (!isRecord(view)) {
    c.add("view", "view must be an object");
    return;
  }
  if (view.type !== undefined && view.type !== surface) {
    c.add("type", `view type ${JSON.stringify(view.type)} does not match surface ${surface}`);
  }
  c.maxChars("callback_id", view.callback_id, "callback_id", L.callbackId);
  c.maxChars("private_metadata", view.private_metadata, "private_metadata", L.privateMetadata);
  if (view.blocks === undefined) c.add("blocks", "view needs blocks");
  const blocks = c.blocks(view.blocks, L.viewBlocks, surface);
  if (surface !== "modal") return;
  c.textObject("title", view.title, "modal title", L.viewTitle, "plain_text");
  if (view.submit !== undefined)
    c.textObject("submit", view.submit, "modal submit", L.viewSubmit, "plain_text");
  if (view.close !== undefined) c.textObject("close", view.close, "modal close", L.viewClose, "plain_text");
  if (view.submit === undefined && blocks.some((b) => isRecord(b) && b.type === "input")) {
    c.add("submit", "modal with input blocks needs submit");
  }
}

/**
 * Checks a Block Kit payload against Slack's limits.
 *
 * @param surface "message" for chat.postMessage/update/postEphemeral arguments (`{ text?, blocks? }`),
 *   "modal" or "home" for a view object.
 * @returns the violations, each `"<path>: <limit> …"` (e.g. `blocks[3].text: section text is 3001 characters,
 *   limit 3000`); empty when the payload is acceptable.
 */
export function checkBlockKitLimits(
  surface: BlockKitSurface,
  payload: MessagePayload | ViewPayload | unknown,
): string[] {
  const c = new Checker();
  try {
    if (surface === "message") checkMessage(c, payload);
    else if (surface === "modal" || surface === "home") checkView(c, surface, payload);
    else c.add("surface", `unknown surface ${JSON.stringify(surface)}`);
  } catch (err) {
    // Only reachable with hostile input (throwing getters, proxies); still never throw.
    c.add("payload", `could not be inspected (${err instanceof Error ? err.message : String(err)})`);
  }
  return c.violations;
}
