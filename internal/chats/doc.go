// Package chats keeps the chats the bot knows, in Valkey: the broadcast
// audience (Audience: every chat that sent the bot an update, in buckets
// by chat id) and the chat directory (Directory: how each chat is named,
// and a search index of those names for the console). It owns their keys
// (Keys; docs/keys.md) and their Lua (lua/chatname.lua, lua/movechats.lua):
// nothing outside it writes them. Both keep a per-chat structure for good,
// so both are split into small buckets Valkey stores compactly (intsets
// and listpacks: Buckets, IndexBuckets), and both still read the one key
// a deployment of before the buckets kept, until their Migrate has moved
// it (safe while the bot runs, from any number of processes).
//
// It knows nothing of Telegram's updates: the caller (internal/app's
// chatMiddleware) says which chat an update is from and how it is named.
package chats
