export { CHANNEL_ERRORS, type RunOutcome, type RunResult, runSchedule } from "./run.js";
export { createScheduler, SCAN_WAIT_DEFAULT, type Scheduler, type SchedulerOptions } from "./scheduler.js";
