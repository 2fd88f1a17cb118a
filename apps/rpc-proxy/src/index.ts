export { createApp, type ProxyDeps, type ProxyApp } from './app';
export { loadConfig, DEFAULT_NODE_URL, type ProxyConfig } from './config';
