import { randomBytes } from 'node:crypto';
import { MongoReadStore } from '../../infra/mongo/read-store.js';
import { readStoreContract } from './read-store-contract.js';
import { whenServer } from './server-url.js';

// Each store gets a fresh database, dropped afterwards. Transactions need MONGO_URL to name a replica set
// (infra/deploy/compose.yaml starts a one-node one: mongodb://127.0.0.1:27017/?replicaSet=rs0&directConnection=true).
whenServer('MONGO_URL', 'MongoDB', 'MongoReadStore (MongoDB)', (url) => {
  readStoreContract('MongoReadStore (MongoDB)', async () => {
    const store = await MongoReadStore.connect(url, `contract_${randomBytes(6).toString('hex')}`);
    return {
      store,
      cleanup: async () => {
        await store.dropDatabase();
        await store.close();
      },
    };
  });
});
