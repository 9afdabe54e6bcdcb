import { storeContract } from "./contract.js";
import { tempDir } from "./helpers.js";

storeContract({
  engine: "sqlite",
  async fresh() {
    const { dir, cleanup } = await tempDir();
    return { env: { DATA_DIR: dir }, dataDir: dir, cleanup };
  },
});
