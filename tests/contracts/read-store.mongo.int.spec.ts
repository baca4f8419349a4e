import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { MongoReadStore } from '../../infra/adapters/mongo/read-store.js';
import { readStoreContract } from './read-store-contract.js';
import { whenServer } from '../support/server-url.js';

// Each store gets a fresh database, dropped afterwards. Transactions need MONGO_URL to name a replica set
// (infra/topology/deploy/compose.yaml starts a one-node one: mongodb://127.0.0.1:27017/?replicaSet=rs0&directConnection=true);
// the store refuses a standalone server. The big-unit case runs at its full size (100 000 puts) here.
whenServer('MONGO_URL', 'MongoDB', 'MongoReadStore (MongoDB)', (url) => {
  readStoreContract('MongoReadStore (MongoDB)', async () => {
    const dbName = `contract_${randomBytes(6).toString('hex')}`;
    const store = await MongoReadStore.connect(url, dbName);
    const client = await new MongoClient(url).connect();
    const db = client.db(dbName);
    return {
      store,
      cleanup: async () => {
        await store.dropDatabase();
        await store.close();
        await client.close();
      },
      inspect: {
        async collection(name: string) {
          const found = await db.listCollections({ name }, { nameOnly: true }).toArray();
          if (found.length === 0) return { exists: false, indexes: 0 };
          const indexes = await db.collection(name).listIndexes().toArray();
          return { exists: true, indexes: indexes.filter((i) => i.name !== '_id_').length };
        },
      },
    };
  });
});
