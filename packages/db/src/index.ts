export * from './entities/index.ts';
export { createOrm, migrateToLatest, ormConfig, type CreateOrmOptions, type Orm } from './orm.ts';
export { startEmbeddedPostgres, type EmbeddedPostgres, type EmbeddedPostgresOptions } from './embedded-postgres.ts';
export { EventWriter, type EventWriterOptions, type NewEvent } from './event-writer.ts';
