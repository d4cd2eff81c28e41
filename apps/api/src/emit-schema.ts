import 'reflect-metadata';
import { writeFile } from 'node:fs/promises';
import { createInProcessEventBus } from '@ccos/api/util-graphql';
import { buildApiSchema, printApiSchema } from './app/schema';
import type { ApiServices } from './app/schema';

/** Writes libs/shared/api-schema/schema.graphql; a test fails when the committed file is stale. */
export const SCHEMA_FILE = 'libs/shared/api-schema/schema.graphql';

const unused = new Proxy({}, { get: () => { throw new Error('emitting the schema runs no resolver'); } });
/** Every feature's services are `unused`: resolvers are built, never run. */
const unusedFeature = new Proxy({}, { get: () => unused });
const features = ['auth', 'clusters', 'certificates', 'nodes', 'installs', 'removals', 'artifacts', 'autoscaling', 'fleet', 'inventory', 'webhooks', 'approvals'].map((name) => [name, unusedFeature]);
const services = { ...Object.fromEntries(features), autoscalerConnections: unused, audit: unused, jobs: unused, remediation: unused, events: createInProcessEventBus() } as unknown as ApiServices;
await writeFile(SCHEMA_FILE, printApiSchema(await buildApiSchema(services)));
console.log(`wrote ${SCHEMA_FILE}`);
