import { DDOS_WORDS, LEARNING_WORDS, WAF_MODE_WORDS } from "../changes/kinds/shield-zone-setting.js";
import type { PickerSource } from "../services/pickers.js";

/**
 * The change modal ("Request a change" shortcut) as the words of a typed command: each kind names the
 * subcommand it runs, the picker for its target and the fields that follow, in the order the command
 * takes them. The submission runs that command, so a change asked in the modal is checked, confirmed
 * and approved exactly as a typed one.
 */
export interface ChangeFormField {
  readonly id: string;
  readonly label: string;
  /** A fixed list of words to choose from; otherwise free text. */
  readonly choices?: readonly string[];
  readonly optional?: boolean;
  readonly placeholder?: string;
}

export interface ChangeForm {
  readonly command: string;
  readonly label: string;
  readonly source: PickerSource;
  readonly fields: readonly ChangeFormField[];
  /** Whether `for 30m` applies. */
  readonly temporary: boolean;
}

export const CHANGE_FORMS: Readonly<Record<string, ChangeForm>> = {
  ddos: {
    command: "ddos",
    label: "DDoS sensitivity",
    source: "shield",
    fields: [{ id: "value", label: "Sensitivity", choices: Object.keys(DDOS_WORDS) }],
    temporary: true,
  },
  "waf-mode": {
    command: "waf-mode",
    label: "WAF execution mode",
    source: "shield",
    fields: [{ id: "value", label: "Mode", choices: Object.keys(WAF_MODE_WORDS) }],
    temporary: true,
  },
  learning: {
    command: "learning",
    label: "Learning mode",
    source: "shield",
    fields: [{ id: "value", label: "Learning mode", choices: Object.keys(LEARNING_WORDS) }],
    temporary: true,
  },
  bot: {
    command: "bot",
    label: "Bot category action",
    source: "shield",
    fields: [
      {
        id: "category",
        label: "Category",
        choices: ["seo", "aiscraper", "aitool", "tool", "ads", "preview", "social"],
      },
      { id: "action", label: "Action", choices: ["block", "allow", "clear"] },
    ],
    temporary: true,
  },
  block: {
    command: "block",
    label: "Block an IP, range, ASN, country or JA4",
    source: "shield",
    fields: [
      {
        id: "entry",
        label: "What to block",
        placeholder: "203.0.113.7, 203.0.113.0/24, AS4134, CN or a JA4",
      },
      { id: "mode", label: "Block or challenge", choices: ["block", "challenge"], optional: true },
    ],
    temporary: true,
  },
  unblock: {
    command: "unblock",
    label: "Unblock an entry",
    source: "shield",
    fields: [{ id: "entry", label: "What to unblock", placeholder: "203.0.113.7, AS4134, CN …" }],
    temporary: true,
  },
  purge: {
    command: "purge",
    label: "Purge a pull zone's cache",
    source: "pull",
    fields: [
      { id: "tag", label: "Cache tag (empty: everything)", optional: true, placeholder: "product-images" },
    ],
    temporary: false,
  },
  restart: {
    command: "restart",
    label: "Restart an application",
    source: "app",
    fields: [],
    temporary: false,
  },
};

export const formFor = (kind: string | undefined): ChangeForm | undefined =>
  kind !== undefined && Object.hasOwn(CHANGE_FORMS, kind) ? CHANGE_FORMS[kind] : undefined;
