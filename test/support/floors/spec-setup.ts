/**
 * The spec floor's rule, kept at run time: a spec opens no socket, starts no process and no thread. A
 * test that needs one belongs in a `.flow.test.ts` (the in-process world) or a `.process.test.ts` file.
 */
import childProcess from "node:child_process";
import net from "node:net";
import workerThreads from "node:worker_threads";

function refuse(what: string): never {
  throw new Error(
    `a spec test ${what}: specs run without sockets, processes or threads; move the test to a .flow.test.ts or .process.test.ts file`,
  );
}

net.Server.prototype.listen = () => refuse("listened on a port");
net.Socket.prototype.connect = () => refuse("opened a connection");
for (const name of ["spawn", "exec", "execFile", "fork", "spawnSync", "execSync", "execFileSync"] as const)
  Object.defineProperty(childProcess, name, { value: () => refuse(`started a process (${name})`) });
Object.defineProperty(workerThreads, "Worker", {
  value: class {
    constructor() {
      refuse("started a worker thread");
    }
  },
});
