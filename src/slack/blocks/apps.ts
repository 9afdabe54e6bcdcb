import type { KnownBlock } from "@slack/types";
import type { App } from "../../edge/schemas/mc.js";
import { endpointTypeLabel } from "../../edge/schemas/mc.js";
import type { AppsPage } from "../../services/apps.js";
import { ACTIONS } from "../ids.js";
import { actions, button, context, header, packLines, section } from "./block-kit.js";
import { code, type Mrkdwn, mrkdwn, truncate } from "./mrkdwn.js";
import { type Reply, reply } from "./reply.js";

const STATUS_LOOK: Record<string, { emoji: string; label: string }> = {
  active: { emoji: ":large_green_circle:", label: "Active" },
  progressing: { emoji: ":large_blue_circle:", label: "Deploying" },
  inactive: { emoji: ":white_circle:", label: "Inactive" },
  failing: { emoji: ":red_circle:", label: "Failing" },
  suspended: { emoji: ":large_orange_circle:", label: "Suspended" },
  unknown: { emoji: ":grey_question:", label: "Unknown" },
};

export function statusLook(status: string): { emoji: string; label: string } {
  return STATUS_LOOK[status] ?? { emoji: ":grey_question:", label: `Unknown (${status})` };
}

export interface AppsNextValue {
  c: string;
  l: number;
  /** The status filter: one status, or several. */
  s?: string | readonly string[];
  p?: boolean;
  /** The page number this button leads to, and the cursors of the pages before it (for Previous). */
  n?: number;
  b?: string[];
}

/** Where an apps answer is in its list: its page number and the cursors that led to it ("" first). */
export interface AppsPosition {
  page: number;
  cursor: string;
  before: readonly string[];
}

/** A button value no longer than Slack allows: the Previous trail is dropped before anything else. */
function pageValue(v: AppsNextValue): string {
  const text = JSON.stringify(v);
  if (text.length <= 2000) return text;
  const { b: _dropped, ...rest } = v;
  return JSON.stringify(rest);
}

function appLine(app: App): Mrkdwn {
  const look = statusLook(app.status);
  const endpoint = app.displayEndpoint
    ? mrkdwn`${code(app.displayEndpoint.address)} (${endpointTypeLabel(app.displayEndpoint.type)})`
    : "_no endpoint_";
  const description = app.description ? `\n      ${truncate(app.description, 200)}` : "";
  return mrkdwn`${look.emoji} *${app.name}*  ${look.label}  ·  ${endpoint}${description}`;
}

export function totalsLine(totals: Partial<Record<string, number>>): string {
  const order = ["active", "progressing", "failing", "suspended", "inactive", "unknown"];
  const keys = [...order.filter((k) => totals[k]), ...Object.keys(totals).filter((k) => !order.includes(k))];
  // A status the API documents no word for is shown as sent, so it is not a second "unknown".
  const word = (k: string) => (STATUS_LOOK[k] ? STATUS_LOOK[k].label.toLowerCase() : `"${k}" (undocumented)`);
  return keys.map((k) => `${statusLook(k).emoji} ${totals[k]} ${word(k)}`).join("   ");
}

/** "2 applications came without an id and are left out." */
export function skippedText(n: number, what: string, field: string): string {
  return `${n} ${what}${n === 1 ? "" : "s"} came without ${field} and ${n === 1 ? "is" : "are"} left out.`;
}

/** "a", "a or b", "a, b or c". */
function joinOr(words: readonly string[]): string {
  return words.length <= 1 ? (words[0] ?? "") : `${words.slice(0, -1).join(", ")} or ${words.at(-1)}`;
}

/**
 * What a filtered answer counts, said as such: "5 of 47 applications are failing" over the whole list when
 * it is at hand, else over the applications read for this answer; with each status's count when several.
 */
function filteredCount(
  page: AppsPage,
  statuses: readonly string[],
  words: string,
  whole?: { total: number; byStatus: Partial<Record<string, number>>; complete: boolean },
): string {
  const counts = whole?.byStatus ?? page.totals;
  const sum = statuses.reduce((n, s) => n + (counts[s] ?? 0), 0);
  const each =
    statuses.length > 1
      ? ` (${statuses.map((s) => `${counts[s] ?? 0} ${statusLook(s).label.toLowerCase()}`).join(", ")})`
      : "";
  const of = whole
    ? `${whole.complete ? "" : "the first "}${whole.total} applications`
    : `the ${page.read} applications read${page.totalItems !== null ? ` of ${page.totalItems}` : ""}`;
  return `${sum} of ${of} ${sum === 1 ? "is" : "are"} ${words}${each}`;
}

export function appsMessage(
  page: AppsPage,
  query: { statuses?: readonly string[]; name?: string; limit: number; isPublic: boolean },
  /** Counts by status over the whole list (not only this page's), when they could be read. */
  whole?: { total: number; byStatus: Partial<Record<string, number>>; complete: boolean },
  at: AppsPosition = { page: 1, cursor: "", before: [] },
): Reply {
  const statuses = query.statuses ?? [];
  // "failing", "failing or deploying": what a filtered answer counts.
  const filterWords = joinOr(statuses.map((s) => statusLook(s).label.toLowerCase()));
  const filter =
    statuses.length > 0
      ? ` (${filterWords})`
      : query.name !== undefined
        ? ` named like "${truncate(query.name, 60)}"`
        : "";
  const blocks: KnownBlock[] = [header(`Magic Containers applications${filter}`)];
  const of = page.totalItems !== null ? ` of ${page.totalItems}` : "";
  const matched = page.matched !== undefined ? `${page.matched} matching · ` : "";
  // Page N of M where the whole list says how many there are (a name search is one page).
  const listed =
    statuses.length > 0
      ? whole && statuses.reduce((sum, s) => sum + (whole.byStatus[s] ?? 0), 0)
      : (whole?.total ?? page.totalItems ?? undefined);
  const pages =
    page.matched === undefined && listed !== undefined && (whole?.complete ?? true)
      ? ` · page ${at.page} of ${Math.max(1, Math.ceil(listed / query.limit))}`
      : page.matched === undefined
        ? ` · page ${at.page}`
        : "";
  const totals =
    statuses.length > 0
      ? filteredCount(page, statuses, filterWords, whole)
      : whole && page.matched === undefined
        ? `${whole.complete ? "all" : "the first"} ${whole.total}: ${totalsLine(whole.byStatus) || "none"}`
        : page.matched === undefined
          ? `on this page: ${totalsLine(page.totals) || "none"}`
          : totalsLine(page.totals) || "none";
  blocks.push(
    context(
      statuses.length > 0 ? `${totals}${pages}` : `${page.read} read${of}${pages} · ${matched}${totals}`,
    ),
  );
  if (page.skipped) blocks.push(context(skippedText(page.skipped, "application", "an id")));
  if (page.apps.length === 0) {
    blocks.push(
      context(statuses.length > 0 ? `No ${filterWords} applications on this page.` : "No applications."),
    );
  } else {
    blocks.push(...packLines(page.apps.map(appLine), 44, "applications"));
  }
  const base = {
    l: query.limit,
    ...(statuses.length === 1 && statuses[0] !== undefined
      ? { s: statuses[0] }
      : statuses.length > 1
        ? { s: statuses }
        : {}),
    ...(query.isPublic ? { p: true } : {}),
  };
  const paging = [];
  const previous = at.before.at(-1);
  if (at.page > 1 && previous !== undefined)
    paging.push(
      button(
        "Previous page",
        ACTIONS.appsPreviousPage,
        pageValue({ ...base, c: previous, n: at.page - 1, b: at.before.slice(0, -1) }),
      ),
    );
  if (page.nextCursor)
    paging.push(
      button(
        "Next page",
        ACTIONS.appsNextPage,
        pageValue({ ...base, c: page.nextCursor, n: at.page + 1, b: [...at.before, at.cursor] }),
      ),
    );
  if (paging.length > 0) blocks.push(actions(...paging));
  return reply(`Magic Containers applications: ${page.apps.length} shown`, blocks);
}

/** A dashboard link's unfurl: the application's status, endpoint and description. */
export function appStatusCard(app: App): { blocks: KnownBlock[] } {
  return {
    blocks: [
      section(appLine(app)),
      context(
        mrkdwn`Magic Containers application ${code(app.id)} · ${code(`/edge restart ${app.id}`)} to ask for a restart`,
      ),
    ],
  };
}
