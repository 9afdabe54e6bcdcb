import { restartAppKind } from "../../changes/kinds/restart-app.js";
import { usage } from "../../errors.js";
import { findApp } from "../../services/apps.js";
import { edgeClientFor } from "../../services/edge-access.js";
import { confirmChangeMessage } from "../blocks/approvals.js";
import { newChangeRequest } from "../request-ids.js";
import { noMoreArgs, pickerWhenEmpty } from "./parse.js";
import type { Subcommand } from "./types.js";

export const RESTART_EXAMPLE = "/edge restart checkout-api";

export const restartCommand: Subcommand = {
  name: "restart",
  usage: "restart <appId or name>",
  summary: "Ask to restart a Magic Containers application (approval may be required in this channel).",
  examples: [RESTART_EXAMPLE],
  shareable: () => false,
  picker: pickerWhenEmpty("app"),
  async run(ctx) {
    const idOrName = ctx.args[0];
    if (!idOrName) throw usage(`Which application? For example: ${RESTART_EXAMPLE}`);
    if (idOrName.length > 200)
      throw usage(`That is not an application id or name. For example: ${RESTART_EXAMPLE}`);
    noMoreArgs(ctx.args, 1, RESTART_EXAMPLE);
    const client = await edgeClientFor(ctx.env.deps, ctx.teamId);
    const app = await findApp(client, idOrName, RESTART_EXAMPLE);
    return confirmChangeMessage(
      newChangeRequest(restartAppKind, { appId: app.id, appName: app.name.slice(0, 200) }),
    );
  },
};
