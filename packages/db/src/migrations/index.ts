import { InitialSchema } from './001-initial.ts';

/** Every migration, oldest first. New ones are appended, never edited once shipped. */
export const MIGRATIONS = [{ name: '001-initial', class: InitialSchema }];
