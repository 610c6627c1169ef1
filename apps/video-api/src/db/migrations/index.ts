import type { Migration, MigrationProvider } from 'kysely'
import * as m0001 from './0001_initial.js'
import * as m0002 from './0002_interactions.js'
import * as m0003 from './0003_service_meta.js'

/** Migrations in order. Listed statically so `npm start` needs no build step or directory scan. */
export const migrationProvider: MigrationProvider = {
  async getMigrations(): Promise<Record<string, Migration>> {
    return { '0001_initial': m0001, '0002_interactions': m0002, '0003_service_meta': m0003 }
  },
}
