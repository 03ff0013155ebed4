/**
 * @grpc/grpc-js, loaded when a gRPC listener first needs it. Most gateways have no gRPC listener, and loading it
 * costs every start (about 0.05 s of CPU and its modules' heap). It is CommonJS, so a synchronous require serves the
 * listener code, which cannot wait; everything else imports its types only.
 */
import { createRequire } from 'node:module';
import type * as GrpcJs from '@grpc/grpc-js';

let loaded: typeof GrpcJs | undefined;

export function grpcJs(): typeof GrpcJs {
  return (loaded ??= createRequire(import.meta.url)('@grpc/grpc-js') as typeof GrpcJs);
}
