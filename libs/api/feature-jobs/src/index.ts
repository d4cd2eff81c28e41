export { type FailedJobs, JobsResolver } from './lib/jobs.resolver';
