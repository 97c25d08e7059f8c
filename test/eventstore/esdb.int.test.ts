import { describe, it } from 'vitest';
import { createEsdbEventStore } from '../../src/eventstore/esdb';
import { eventStoreContract } from './contract';

/**
 * The contract on EventStoreDB/KurrentDB: against `ESDB_URL` when set, else in a container when a Docker
 * engine answers (testcontainers), else skipped with the reason printed.
 */
const resolveServer = async (): Promise<{ url: string; stop: () => Promise<void> } | { skip: string }> => {
  if (process.env.ESDB_URL) return { url: process.env.ESDB_URL, stop: async () => {} };
  try {
    const { getContainerRuntimeClient, GenericContainer, Wait } = await import('testcontainers');
    await getContainerRuntimeClient();
    const container = await new GenericContainer('docker.kurrent.io/kurrent-latest/kurrentdb:latest')
      .withEnvironment({ KURRENTDB_INSECURE: 'true', KURRENTDB_RUN_PROJECTIONS: 'None' })
      .withExposedPorts(2113)
      .withWaitStrategy(Wait.forHttp('/health/live', 2113))
      .start();
    return {
      url: `esdb://${container.getHost()}:${container.getMappedPort(2113)}?tls=false`,
      stop: async () => {
        await container.stop();
      },
    };
  } catch (error) {
    return {
      skip: `no ESDB_URL and no Docker engine for testcontainers (${(error as Error).message.split('\n')[0]})`,
    };
  }
};

const server = await resolveServer();
if ('skip' in server) {
  console.log(`[contract] EventStoreDB run skipped: ${server.skip}`);
  describe.skip('event store contract: EventStoreDB', () => {
    it('needs ESDB_URL or a Docker engine', () => {});
  });
} else {
  eventStoreContract('EventStoreDB', async () => {
    const store = createEsdbEventStore(server.url);
    return {
      store,
      close: async () => {
        await store.close();
        await server.stop();
      },
    };
  });
}
