#!/usr/bin/env node
// The command line (`ptv serve`, `ptv projections status`, `ptv audit replay …`) for `npx ptv` and installs of
// this package: the same entry point as `npm start` / `npm run cli --`, with TypeScript loaded by tsx.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
