export { seqAfter, type Appended, type EventLog, type OldestPoint, type ReplayStart, type Retention, type StoredEvent } from './event-log';
export { createSqliteLog, type SqliteLogOptions } from './sqlite-log';
export { createRedisLog, type RedisLogOptions } from './redis-log';
export { deferEventLog, type DeferredEventLog } from './deferred-log';
