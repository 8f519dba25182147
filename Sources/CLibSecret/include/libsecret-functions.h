// Every libsecret, GLib, GObject and GIO function tokenctl calls, once, as the X-macro
// TOKENCTL_LIBSECRET_FUNCTIONS(F, V): F(return type, name, (parameters), (arguments)) for
// a function that returns a value, V(name, (parameters), (arguments)) for one that does
// not. The loader builds its table of pointers and its wrappers from this list, the shim
// declares the wrappers, and Tests/Support/check-libsecret-declarations.sh compares each
// entry with the prototype in Debian's headers: one list, so that none of them can drift.
//
// It has two parts, because the loader opens two libraries: TOKENCTL_GIO_FUNCTIONS, from
// GIO (with GObject and GLib), which the keyring's read paths need, and
// TOKENCTL_SECRET_FUNCTIONS, from libsecret, which only its writes do.
#ifndef TOKENCTL_LIBSECRET_FUNCTIONS_H
#define TOKENCTL_LIBSECRET_FUNCTIONS_H

#define TOKENCTL_LIBSECRET_FUNCTIONS(F, V) TOKENCTL_SECRET_FUNCTIONS(F, V) TOKENCTL_GIO_FUNCTIONS(F, V)

#define TOKENCTL_SECRET_FUNCTIONS(F, V)                                                                          \
  /* libsecret */                                                                                                \
  F(SecretService *, secret_service_get_sync, (SecretServiceFlags flags, GCancellable *cancellable, GError **error), \
    (flags, cancellable, error))                                                                                 \
  V(secret_service_disconnect, (void), ())                                                                       \
  V(secret_service_search,                                                                                       \
    (SecretService *service, const SecretSchema *schema, GHashTable *attributes, SecretSearchFlags flags,        \
     GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data),                               \
    (service, schema, attributes, flags, cancellable, callback, user_data))                                      \
  F(GList *, secret_service_search_finish, (SecretService *service, GAsyncResult *result, GError **error),       \
    (service, result, error))                                                                                    \
  V(secret_item_new_for_dbus_path,                                                                               \
    (SecretService *service, const gchar *item_path, SecretItemFlags flags, GCancellable *cancellable,           \
     GAsyncReadyCallback callback, gpointer user_data),                                                          \
    (service, item_path, flags, cancellable, callback, user_data))                                               \
  F(SecretItem *, secret_item_new_for_dbus_path_finish, (GAsyncResult *result, GError **error), (result, error)) \
  V(secret_item_load_secrets,                                                                                    \
    (GList *items, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data),                 \
    (items, cancellable, callback, user_data))                                                                   \
  F(gboolean, secret_item_load_secrets_finish, (GAsyncResult *result, GError **error), (result, error))          \
  F(SecretCollection *, secret_collection_for_alias_sync,                                                        \
    (SecretService *service, const gchar *alias, SecretCollectionFlags flags, GCancellable *cancellable,         \
     GError **error),                                                                                            \
    (service, alias, flags, cancellable, error))                                                                 \
  F(gboolean, secret_collection_get_locked, (SecretCollection *collection), (collection))                        \
  F(gchar *, secret_collection_get_label, (SecretCollection *collection), (collection))                          \
  F(SecretItem *, secret_item_create_sync,                                                                       \
    (SecretCollection *collection, const SecretSchema *schema, GHashTable *attributes, const gchar *label,       \
     SecretValue *value, SecretItemCreateFlags flags, GCancellable *cancellable, GError **error),                \
    (collection, schema, attributes, label, value, flags, cancellable, error))                                   \
  F(gboolean, secret_item_set_secret_sync,                                                                       \
    (SecretItem *item, SecretValue *value, GCancellable *cancellable, GError **error),                           \
    (item, value, cancellable, error))                                                                           \
  F(gboolean, secret_item_set_attributes_sync,                                                                   \
    (SecretItem *item, const SecretSchema *schema, GHashTable *attributes, GCancellable *cancellable,            \
     GError **error),                                                                                            \
    (item, schema, attributes, cancellable, error))                                                              \
  F(gboolean, secret_item_set_label_sync,                                                                        \
    (SecretItem *item, const gchar *label, GCancellable *cancellable, GError **error),                           \
    (item, label, cancellable, error))                                                                           \
  F(gboolean, secret_item_delete_sync, (SecretItem *item, GCancellable *cancellable, GError **error),            \
    (item, cancellable, error))                                                                                  \
  F(gboolean, secret_item_get_locked, (SecretItem *item), (item))                                                \
  F(GHashTable *, secret_item_get_attributes, (SecretItem *item), (item))                                        \
  F(guint64, secret_item_get_modified, (SecretItem *item), (item))                                               \
  F(SecretValue *, secret_item_get_secret, (SecretItem *item), (item))                                           \
  F(SecretValue *, secret_value_new, (const gchar *secret, gssize length, const gchar *content_type),            \
    (secret, length, content_type))                                                                              \
  F(const gchar *, secret_value_get, (SecretValue *value, gsize *length), (value, length))                       \
  V(secret_value_unref, (gpointer value), (value))                                                               \
  F(GQuark, secret_error_get_quark, (void), ())

#define TOKENCTL_GIO_FUNCTIONS(F, V)                                                                             \
  F(GQuark, g_io_error_quark, (void), ())                                                                        \
  /* GLib: memory, strings, hash tables and lists */                                                             \
  V(g_free, (gpointer memory), (memory))                                                                         \
  F(gchar *, g_strdup, (const gchar *string), (string))                                                          \
  V(g_error_free, (GError *error), (error))                                                                      \
  F(gboolean, g_hash_table_insert, (GHashTable *table, gpointer key, gpointer value), (table, key, value))       \
  V(g_hash_table_unref, (GHashTable *table), (table))                                                            \
  V(g_hash_table_iter_init, (GHashTableIter *iterator, GHashTable *table), (iterator, table))                    \
  F(gboolean, g_hash_table_iter_next, (GHashTableIter *iterator, gpointer *key, gpointer *value),                \
    (iterator, key, value))                                                                                      \
  V(g_list_free, (GList *list), (list))                                                                          \
  F(GList *, g_list_prepend, (GList *list, gpointer data), (list, data))                                         \
  V(g_strfreev, (gchar **strings), (strings))                                                                    \
  /* GLib: main loops and threads, for the change monitor and the store's own context */                         \
  F(GMainContext *, g_main_context_new, (void), ())                                                              \
  V(g_main_context_unref, (GMainContext *context), (context))                                                    \
  V(g_main_context_push_thread_default, (GMainContext *context), (context))                                      \
  V(g_main_context_pop_thread_default, (GMainContext *context), (context))                                       \
  F(gboolean, g_main_context_iteration, (GMainContext *context, gboolean may_block), (context, may_block))       \
  F(GMainContext *, g_main_context_get_thread_default, (void), ())                                               \
  F(GMainLoop *, g_main_loop_new, (GMainContext *context, gboolean is_running), (context, is_running))           \
  V(g_main_loop_run, (GMainLoop *loop), (loop))                                                                  \
  V(g_main_loop_quit, (GMainLoop *loop), (loop))                                                                 \
  V(g_main_loop_unref, (GMainLoop *loop), (loop))                                                                \
  F(GSource *, g_idle_source_new, (void), ())                                                                    \
  V(g_source_set_callback, (GSource *source, GSourceFunc function, gpointer data, GDestroyNotify notify),        \
    (source, function, data, notify))                                                                            \
  F(guint, g_source_attach, (GSource *source, GMainContext *context), (source, context))                         \
  V(g_source_unref, (GSource *source), (source))                                                                 \
  F(GThread *, g_thread_try_new, (const gchar *name, GThreadFunc function, gpointer data, GError **error),       \
    (name, function, data, error))                                                                               \
  F(gpointer, g_thread_join, (GThread *thread), (thread))                                                        \
  V(g_thread_unref, (GThread *thread), (thread))                                                                 \
  F(GThread *, g_thread_self, (void), ())                                                                        \
  /* GLib: the parameters of D-Bus signals and the replies of D-Bus calls */                                     \
  F(const gchar *, g_variant_get_type_string, (GVariant *value), (value))                                        \
  F(gsize, g_variant_n_children, (GVariant *value), (value))                                                     \
  F(GVariant *, g_variant_get_child_value, (GVariant *value, gsize index), (value, index))                       \
  F(const gchar *, g_variant_get_string, (GVariant *value, gsize *length), (value, length))                      \
  V(g_variant_unref, (GVariant *value), (value))                                                                 \
  F(guint64, g_variant_get_uint64, (GVariant *value), (value))                                                   \
  F(GVariant *, g_variant_lookup_value,                                                                          \
    (GVariant *dictionary, const gchar *key, const GVariantType *expected_type),                                 \
    (dictionary, key, expected_type))                                                                            \
  F(GVariant *, g_variant_new_string, (const gchar *string), (string))                                           \
  F(GVariant *, g_variant_new_object_path, (const gchar *object_path), (object_path))                            \
  F(GVariant *, g_variant_new_tuple, (GVariant *const *children, gsize count), (children, count))                \
  F(guint32, g_variant_get_uint32, (GVariant *value), (value))                                                   \
  F(gboolean, g_variant_get_boolean, (GVariant *value), (value))                                                 \
  F(GVariant *, g_variant_new_boolean, (gboolean value), (value))                                                \
  F(GVariant *, g_variant_new_uint32, (guint32 value), (value))                                                  \
  F(GVariant *, g_variant_new_int32, (gint32 value), (value))                                                    \
  F(GVariant *, g_variant_new_byte, (guint8 value), (value))                                                     \
  F(GVariant *, g_variant_new_int64, (gint64 value), (value))                                                    \
  F(GVariant *, g_variant_new_variant, (GVariant *value), (value))                                               \
  F(GVariant *, g_variant_new_dict_entry, (GVariant *key, GVariant *value), (key, value))                        \
  F(GVariant *, g_variant_new_array, (const GVariantType *child_type, GVariant *const *children, gsize count),   \
    (child_type, children, count))                                                                               \
  F(GVariant *, g_variant_ref_sink, (GVariant *value), (value))                                                  \
  F(gconstpointer, g_variant_get_fixed_array, (GVariant *value, gsize *n_elements, gsize element_size),          \
    (value, n_elements, element_size))                                                                           \
  /* GObject */                                                                                                  \
  F(gpointer, g_object_ref, (gpointer object), (object))                                                         \
  V(g_object_unref, (gpointer object), (object))                                                                 \
  F(gpointer, g_object_get_data, (GObject *object, const gchar *key), (object, key))                             \
  V(g_object_set_data_full, (GObject *object, const gchar *key, gpointer data, GDestroyNotify destroy),          \
    (object, key, data, destroy))                                                                                \
  /* GIO: the session bus */                                                                                     \
  F(GDBusConnection *, g_bus_get_sync, (GBusType bus_type, GCancellable *cancellable, GError **error),           \
    (bus_type, cancellable, error))                                                                              \
  F(gchar *, g_dbus_error_get_remote_error, (const GError *error), (error))                                      \
  F(gboolean, g_dbus_error_strip_remote_error, (GError *error), (error))                                         \
  F(GDBusConnection *, g_dbus_proxy_get_connection, (GDBusProxy *proxy), (proxy))                                \
  F(const gchar *, g_dbus_proxy_get_name, (GDBusProxy *proxy), (proxy))                                          \
  F(const gchar *, g_dbus_proxy_get_object_path, (GDBusProxy *proxy), (proxy))                                   \
  F(guint, g_dbus_connection_signal_subscribe,                                                                   \
    (GDBusConnection *connection, const gchar *sender, const gchar *interface_name, const gchar *member,         \
     const gchar *object_path, const gchar *arg0, GDBusSignalFlags flags, GDBusSignalCallback callback,          \
     gpointer user_data, GDestroyNotify user_data_free_function),                                                \
    (connection, sender, interface_name, member, object_path, arg0, flags, callback, user_data,                  \
     user_data_free_function))                                                                                   \
  V(g_dbus_connection_signal_unsubscribe, (GDBusConnection *connection, guint subscription), (connection, subscription)) \
  F(GVariant *, g_dbus_connection_call_sync,                                                                     \
    (GDBusConnection *connection, const gchar *bus_name, const gchar *object_path, const gchar *interface_name,  \
     const gchar *method_name, GVariant *parameters, const GVariantType *reply_type, GDBusCallFlags flags,       \
     gint timeout_milliseconds, GCancellable *cancellable, GError **error),                                      \
    (connection, bus_name, object_path, interface_name, method_name, parameters, reply_type, flags,              \
     timeout_milliseconds, cancellable, error))                                                                  \
  /* GIO: the agent's own object on the session bus (tokenctl-dbus(7)) */                                        \
  F(GDBusNodeInfo *, g_dbus_node_info_new_for_xml, (const gchar *xml_data, GError **error), (xml_data, error))   \
  F(GDBusInterfaceInfo *, g_dbus_node_info_lookup_interface, (GDBusNodeInfo *info, const gchar *name),          \
    (info, name))                                                                                                \
  V(g_dbus_node_info_unref, (GDBusNodeInfo *info), (info))                                                       \
  F(guint, g_dbus_connection_register_object,                                                                    \
    (GDBusConnection *connection, const gchar *object_path, GDBusInterfaceInfo *interface_info,                  \
     const GDBusInterfaceVTable *vtable, gpointer user_data, GDestroyNotify user_data_free_func, GError **error), \
    (connection, object_path, interface_info, vtable, user_data, user_data_free_func, error))                    \
  F(gboolean, g_dbus_connection_unregister_object, (GDBusConnection *connection, guint registration_id),         \
    (connection, registration_id))                                                                               \
  V(g_dbus_method_invocation_return_value, (GDBusMethodInvocation *invocation, GVariant *parameters),            \
    (invocation, parameters))                                                                                    \
  V(g_dbus_method_invocation_return_dbus_error,                                                                  \
    (GDBusMethodInvocation *invocation, const gchar *error_name, const gchar *error_message),                    \
    (invocation, error_name, error_message))                                                                     \
  F(gboolean, g_dbus_connection_emit_signal,                                                                     \
    (GDBusConnection *connection, const gchar *destination_bus_name, const gchar *object_path,                   \
     const gchar *interface_name, const gchar *signal_name, GVariant *parameters, GError **error),               \
    (connection, destination_bus_name, object_path, interface_name, signal_name, parameters, error))

#endif
