/**
 * Every action_id, callback_id and block_id the app uses: the Block Kit builders put them on elements,
 * listeners/index.ts ties each to its listener.
 */
export const ACTIONS = {
  shareInChannel: "edge.share_in_channel",
  appsNextPage: "edge.apps.next_page",
  appsPreviousPage: "edge.apps.previous_page",
  zonesPreviousPage: "edge.zones.previous_page",
  zonesNextPage: "edge.zones.next_page",
  dnsScanNow: "edge.dns.scan_now",
  /** A record type or page of /edge dns: `edge.dns.page.<n>` (unique in the message); see ACTION_PATTERNS.dnsPage. */
  dnsPage: "edge.dns.page",
  openKeyModal: "edge.key.open_modal",
  /** Block / Allow / Clear on /edge bots (Slack's confirm dialog already asked). */
  botBlock: "edge.bot.block",
  botAllow: "edge.bot.allow",
  botClear: "edge.bot.clear",
  /** Confirm / Cancel on the reply to a typed change (/edge bot, /edge restart, /edge purge …). */
  changeConfirm: "edge.change.confirm",
  changeCancel: "edge.change.cancel",
  approve: "edge.approval.approve",
  reject: "edge.approval.reject",
  /** On the rejecter's private answer: open the modal that adds a reason to their rejection. */
  rejectReason: "edge.approval.reject_reason",
  retry: "edge.approval.retry",
  undo: "edge.approval.undo",
  /**
   * On a resolved alert's cleanup checklist and the heads-up before an undo (value: the request id): Undo now
   * (the card's decision, answered privately), Make permanent, and Extend by 30 min or 2 h.
   */
  cleanupUndo: "edge.cleanup.undo",
  makePermanent: "edge.change.make_permanent",
  extend30m: "edge.change.extend.30m",
  extend2h: "edge.change.extend.2h",
  /** A permanent change on the checklist (value: {"requestId"}): its undoing command, run as if typed. */
  cleanupUndoPermanent: "edge.cleanup.undo_permanent",
  /** On the /edge incident card: rebuild it in place. */
  incidentRefresh: "edge.incident.refresh",
  /** A triggered WAF rule's AI recommendation (the /edge waf answer), from the incident card. */
  incidentWafRecommendation: "edge.incident.waf_recommendation",
  /** "See all" of one card section: `edge.incident.see_all.<section>` (distinct ids within one actions block). */
  incidentSeeAll: "edge.incident.see_all",
  incidentPreviousPage: "edge.incident.previous_page",
  incidentNextPage: "edge.incident.next_page",
  /** On the /edge timeline answer: its pages, and the postmortem draft posted as a file. */
  timelinePreviousPage: "edge.timeline.previous_page",
  timelineNextPage: "edge.timeline.next_page",
  timelineExport: "edge.timeline.export",
  /**
   * On an alert's parent message (value: the episode id): the incident card in its thread, the timeline for the
   * presser, mute, acknowledge.
   */
  alertIncident: "edge.alert.incident",
  alertTimeline: "edge.alert.timeline",
  alertMute: "edge.alert.mute",
  alertUnmute: "edge.alert.unmute",
  alertAcknowledge: "edge.alert.acknowledge",
  /** On /edge status (value: StatusZoneValue): a ranked zone's incident card, or a zone watch in the channel. */
  statusIncident: "edge.status.incident",
  statusWatch: "edge.status.watch",
  /**
   * An alert's mitigations: the generic change confirm (ChangeButtonValue), answered in the alert's thread
   * instead of replacing the alert (see listeners/actions/change-confirm.ts).
   */
  alertMitigateBlock: "edge.change.confirm.alert_block",
  alertMitigateDdos: "edge.change.confirm.alert_ddos",
  alertMitigateRestart: "edge.change.confirm.alert_restart",
  /** A drift post's Put it back: the generic change confirm, answered in the drift post's thread. */
  driftPutBack: "edge.change.confirm.alert_drift_put_back",
  /** A drift post's Keep (value: DriftKeepValue): the new value becomes the watch's snapshot. */
  driftKeep: "edge.drift.keep",
  /** The kind menu of the change modal: choosing one redraws the modal with that kind's fields. */
  changeModalKind: "edge.change_modal.kind",
  /** Pickers: `edge.pick.<source>` (shield, dns, app, pull); see ACTION_PATTERNS.picker. */
  pickerPrefix: "edge.pick.",
} as const;

/** The action_id prefix of change confirms that answer in the clicked message's thread. */
export const IN_THREAD_CONFIRM_PREFIX = "edge.change.confirm.alert_";

/** Action ids registered by pattern. */
export const ACTION_PATTERNS = {
  incidentSeeAll: /^edge\.incident\.see_all(\.[a-z0-9]+)?$/,
  dnsPage: /^edge\.dns\.page\.\d+$/,
  /** Confirm of a change: `edge.change.confirm`, or `edge.change.confirm.<word>` where one block holds several. */
  changeConfirm: /^edge\.change\.confirm(\.[a-z0-9_]+)?$/,
  /** A picker's external_select: its suggestions (block_suggestion) and, in a message, its choice. */
  picker: /^edge\.pick\.(shield|dns|app|pull)$/,
} as const;

/** Workflow Builder steps: the callback_id of each function in manifest.yml. */
export const FUNCTIONS = {
  zoneStatus: "get_zone_status",
  requestBotCategoryChange: "request_bot_category_change",
  requestBlock: "request_block",
  dnsSummary: "post_dns_summary",
} as const;

export const VIEWS = {
  keyModal: "edge.key.modal",
  /** The change modal the "Request a change" shortcut opens. */
  changeModal: "edge.change.modal",
  /** The reason a rejecter adds (block id and action id of its one input). */
  rejectReason: "edge.reject.reason",
} as const;

/** Shortcut callback ids (also in manifest.yml; test/manifest.test.ts keeps them equal). */
export const SHORTCUTS = {
  requestChange: "edge.shortcut.request_change",
  incidentOverview: "edge.shortcut.incident_overview",
} as const;

/** Blocks of the change modal; every input's element has the action id `value`. */
export const CHANGE_MODAL = {
  kind: "change_kind",
  target: "change_target",
  fieldPrefix: "change_field_",
  duration: "change_duration",
  channel: "change_channel",
  value: "value",
} as const;

export const BLOCKS = {
  keyInput: "key_input",
  keyAction: "key_action",
} as const;

export const KEY_INPUT_ACTION = "key_value";
export const KEY_ACTION_SELECT = "key_action_select";
