import 'reflect-metadata';
import { writeFile } from 'node:fs/promises';
import { createInProcessEventBus } from '@ccos/api/util-graphql';
import { buildApiSchema, printApiSchema } from './app/schema';
import type { ApiServices } from './app/schema';

/** Writes libs/shared/api-schema/schema.graphql; a test fails when the committed file is stale. */
export const SCHEMA_FILE = 'libs/shared/api-schema/schema.graphql';

const unused = new Proxy({}, { get: () => { throw new Error('emitting the schema runs no resolver'); } });
const services = { users: unused, sessions: unused, clusters: unused, audit: unused, events: createInProcessEventBus() } as unknown as ApiServices;
await writeFile(SCHEMA_FILE, printApiSchema(await buildApiSchema(services)));
console.log(`wrote ${SCHEMA_FILE}`);
