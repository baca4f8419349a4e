import { randomBytes } from 'node:crypto';
import { MongoReadStore } from '../../infra/adapters/mongo/read-store.js';
import { textSearchContract } from './text-search-contract.js';
import { whenServer } from '../support/server-url.js';

// Runs whenever MONGO_URL names a loopback MongoDB (a replica set: the store refuses a standalone server); each
// store gets a fresh database, dropped when it closes.
whenServer('MONGO_URL', 'MongoDB', 'text search contract: MongoReadStore (MongoDB)', (url) => {
  textSearchContract('MongoReadStore (MongoDB)', async () => {
    const store = await MongoReadStore.connect(url, `text_${randomBytes(6).toString('hex')}`);
    const close = store.close.bind(store);
    store.close = async () => {
      await store.dropDatabase();
      await close();
    };
    return store;
  });
});
