import { tempDir } from "../support/helpers.js";
import { storeContract } from "./contract.js";

storeContract({
  engine: "sqlite",
  async fresh() {
    const { dir, cleanup } = await tempDir();
    return { env: { DATA_DIR: dir }, dataDir: dir, cleanup };
  },
});
