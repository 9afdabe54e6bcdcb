/**
 * A view_submission payload as Slack sends it for workspace T0001: `userId` (shown as `userName`) submits the
 * modal `callbackId` titled `title`, with its `privateMetadata` and the `values` of its inputs.
 */
export function viewSubmission(o: {
  userId: string;
  userName?: string;
  callbackId: string;
  title: string;
  privateMetadata: string;
  values: Record<string, Record<string, unknown>>;
}) {
  const name = o.userName ?? o.userId;
  return {
    type: "view_submission",
    team: { id: "T0001", domain: "acme" },
    user: { id: o.userId, username: name, name, team_id: "T0001" },
    api_app_id: "A0001",
    token: "legacy",
    trigger_id: "trigger-1",
    view: {
      id: "V0001",
      team_id: "T0001",
      type: "modal",
      callback_id: o.callbackId,
      private_metadata: o.privateMetadata,
      state: { values: o.values },
      hash: "h",
      title: { type: "plain_text", text: o.title },
      blocks: [],
      app_id: "A0001",
      bot_id: "BBOT",
    },
    response_urls: [],
  };
}
