"""The worker pool behind AsyncVectorEnv: protocol, shared memory and worker loop."""
