export { createApp, type AppDeps, type ProxyApp } from './app';
export { loadConfig, DEFAULT_NODE_URL, type ProxyConfig } from './config';
