import type { TweakIndexConfig } from './config';
import type { TweakIndexStore } from './store';
import { createPostgresIndexStore } from './store-postgres';
import { createSqliteIndexStore } from './store-sqlite';

/** The index's store: PostgreSQL when DATABASE_URL is set, else SQLite under DATA_DIR (not opened yet). */
export function createTweakIndexStore(config: Pick<TweakIndexConfig, 'databaseUrl' | 'sqliteFile'>): TweakIndexStore {
  return config.databaseUrl === undefined ? createSqliteIndexStore(config.sqliteFile) : createPostgresIndexStore(config.databaseUrl);
}
