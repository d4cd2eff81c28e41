import { InitialSchema1764460800000 } from './migrations/1764460800000-initial-schema';

/** Every migration, oldest first. The same list serves the real server and the embedded database. */
export const MIGRATIONS = [InitialSchema1764460800000];
