// SPDX-License-Identifier: GPL-2.0
/*
 * flexctl status, load and unload: the flex module through libkmod (the
 * library behind modprobe, lsmod and rmmod), never by hand-rolled
 * init_module()/delete_module() calls. The module is found by name in the
 * module directory (/lib/modules/$(uname -r), modules.dep) or taken from a
 * file with --module PATH; parameters are checked against the module's own
 * parm list before loading, because the kernel only warns about unknown
 * ones and loads anyway.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <libkmod.h>

#include "flexctl.h"

#define FLEX_MODULE_NAME "flex"

struct kmodctl {
	struct kmod_ctx *ctx;
	struct kmod_module *mod;	/* by name (loaded state) or from the file */
	bool from_path;
};

static void kmodctl_close(struct kmodctl *k)
{
	if (k->mod)
		kmod_module_unref(k->mod);
	if (k->ctx)
		kmod_unref(k->ctx);
}

/*
 * Open libkmod and find the module: from @path when given, else by name
 * through the module directory's index. With @need_file, a module that is
 * not in the module directory is an error (load needs its file); without,
 * a module object by name is enough (the loaded state lives in /sys).
 */
static int kmodctl_open(struct flexctl *c, struct kmodctl *k, const char *path, bool need_file)
{
	struct kmod_list *list = NULL;
	struct utsname u;
	int err;

	memset(k, 0, sizeof(*k));
	k->ctx = kmod_new(NULL, NULL);
	if (!k->ctx)
		return ctl_error(c, "libkmod: cannot create a context (out of memory?)");
	if (path) {
		err = kmod_module_new_from_path(k->ctx, path, &k->mod);
		if (err)
			return ctl_error(c, "cannot use module file %s: %s", path, strerror(-err));
		k->from_path = true;
		return 0;
	}
	err = kmod_module_new_from_lookup(k->ctx, FLEX_MODULE_NAME, &list);
	if (!err && list) {
		k->mod = kmod_module_get_module(list);
		kmod_module_unref_list(list);
		return 0;
	}
	kmod_module_unref_list(list);
	if (need_file) {
		uname(&u);
		if (kmod_get_dirname(k->ctx))
			return ctl_error(c, "module %s not found in %s (install it there and run "
					 "depmod, or give its file with --module PATH)",
					 FLEX_MODULE_NAME, kmod_get_dirname(k->ctx));
		return ctl_error(c, "module %s not found in /lib/modules/%s (install it there and "
				 "run depmod, or give its file with --module PATH)",
				 FLEX_MODULE_NAME, u.release);
	}
	err = kmod_module_new_from_name(k->ctx, FLEX_MODULE_NAME, &k->mod);
	if (err)
		return ctl_error(c, "libkmod: %s", strerror(-err));
	return 0;
}

/* The module file's parm descriptions as { name: "description (type)" }, or NULL. */
static struct json_object *module_parm_info(struct kmodctl *k)
{
	struct kmod_list *info = NULL, *l;
	struct json_object *o;

	if (!kmod_module_get_path(k->mod) || kmod_module_get_info(k->mod, &info) < 0)
		return NULL;
	o = json_object_new_object();
	kmod_list_foreach(l, info) {
		const char *key = kmod_module_info_get_key(l);
		const char *val = kmod_module_info_get_value(l);
		const char *colon;
		char name[64];

		if (strcmp(key, "parm") || !val || !(colon = strchr(val, ':')))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(colon - val), val);
		tool_jset_str(o, name, colon + 1);
	}
	kmod_module_info_free_list(info);
	return o;
}

static const char *module_info_value(struct kmodctl *k, const char *key, char *buf, size_t len)
{
	struct kmod_list *info = NULL, *l;
	const char *ret = NULL;

	if (!kmod_module_get_path(k->mod) || kmod_module_get_info(k->mod, &info) < 0)
		return NULL;
	kmod_list_foreach(l, info) {
		if (!strcmp(kmod_module_info_get_key(l), key)) {
			snprintf(buf, len, "%s", kmod_module_info_get_value(l));
			ret = buf;
			break;
		}
	}
	kmod_module_info_free_list(info);
	return ret;
}

/* ---- status ---- */

static const struct column status_cols[] = {
	{ "module", "Module", COL_STR },
	{ "state", "State", COL_STR },
	{ "version", "Version", COL_STR },
	{ "srcversion", "Source version", COL_STR },
	{ "refcount", "References", COL_INT },
	{ "size", "Size", COL_SIZE },
	{ "path", "File", COL_STR },
	{ "num_devices_present", "Devices", COL_INT },
};

static int count_devices(struct flexctl *c, struct json_object *names)
{
	char path[512];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/class/flex", c->sysfs_root);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		unsigned int dev;
		char tail;

		/* PFs only: flexN, not flexNvfM. */
		if (sscanf(de->d_name, "flex%u%c", &dev, &tail) == 1) {
			json_object_array_add(names, json_object_new_string(de->d_name));
			n++;
		}
	}
	closedir(d);
	return n;
}

static int sort_strings(const void *a, const void *b)
{
	return strcmp(json_object_get_string(*(struct json_object *const *)a),
		      json_object_get_string(*(struct json_object *const *)b));
}

static struct json_object *loaded_params(struct flexctl *c)
{
	struct json_object *o = json_object_new_object();
	char path[512], val[256];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/module/%s/parameters", c->sysfs_root, FLEX_MODULE_NAME);
	d = opendir(path);
	if (!d)
		return o;
	while ((de = readdir(d))) {
		char *end;
		unsigned long long v;

		if (de->d_name[0] == '.')
			continue;
		if (sysfs_read_str(c, val, sizeof(val), "module/%s/parameters/%s",
				   FLEX_MODULE_NAME, de->d_name))
			continue;
		/* Numbers as JSON numbers, anything else as a string. */
		v = strtoull(val, &end, 10);
		if (*val && !*end)
			tool_jset_int(o, de->d_name, (int64_t)v);
		else
			tool_jset_str(o, de->d_name, val);
	}
	closedir(d);
	return o;
}

int cmd_status(struct flexctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "module", required_argument, NULL, 'm' },
		CTL_COMMON_LONGOPTS,
		{ 0 }
	};
	const char *path = NULL;
	struct json_object *st, *params, *names, *pinfo;
	struct kmodctl k;
	char buf[256];
	int opt, state;

	while ((opt = getopt_long(argc, argv, "m:hj", opts, NULL)) != -1) {
		if (ctl_common_opt(c, opt))
			continue;
		if (opt == 'm')
			path = optarg;
		else
			return ctl_usage_error(c, "status", "unknown option");
	}
	if (optind != argc)
		return ctl_usage_error(c, "status", "unexpected argument '%s'", argv[optind]);
	if (kmodctl_open(c, &k, path, false)) {
		kmodctl_close(&k);
		return FLEXCTL_EXIT_FAIL;
	}
	st = json_object_new_object();
	tool_jset_str(st, "module", FLEX_MODULE_NAME);
	/* The loaded state is the name's, whatever file was given. */
	{
		struct kmod_module *byname = NULL;

		kmod_module_new_from_name(k.ctx, FLEX_MODULE_NAME, &byname);
		state = byname ? kmod_module_get_initstate(byname) : -ENOENT;
		json_object_object_add(st, "loaded", json_object_new_boolean(state >= 0));
		tool_jset_str(st, "state", state >= 0 ? kmod_module_initstate_str(state) : "not loaded");
		if (state >= 0) {
			int ref = kmod_module_get_refcnt(byname);
			long size = kmod_module_get_size(byname);

			if (ref >= 0)
				tool_jset_int(st, "refcount", ref);
			if (size > 0)
				tool_jset_int(st, "size", size);
		}
		if (byname)
			kmod_module_unref(byname);
	}
	if (state >= 0) {
		if (!sysfs_read_str(c, buf, sizeof(buf), "module/%s/version", FLEX_MODULE_NAME))
			tool_jset_str(st, "version", buf);
		if (!sysfs_read_str(c, buf, sizeof(buf), "module/%s/srcversion", FLEX_MODULE_NAME))
			tool_jset_str(st, "srcversion", buf);
		params = loaded_params(c);
	} else {
		params = json_object_new_object();
		if (module_info_value(&k, "version", buf, sizeof(buf)))
			tool_jset_str(st, "version", buf);
		if (module_info_value(&k, "srcversion", buf, sizeof(buf)))
			tool_jset_str(st, "srcversion", buf);
	}
	if (kmod_module_get_path(k.mod))
		tool_jset_str(st, "path", kmod_module_get_path(k.mod));
	json_object_object_add(st, "parameters", params);
	pinfo = module_parm_info(&k);
	if (pinfo)
		json_object_object_add(st, "parameter_descriptions", pinfo);
	names = json_object_new_array();
	tool_jset_int(st, "num_devices_present", count_devices(c, names));
	json_object_array_sort(names, sort_strings);
	json_object_object_add(st, "devices", names);

	if (c->json) {
		out_json(c, st);
	} else {
		out_fields(c, st, status_cols, sizeof(status_cols) / sizeof(status_cols[0]));
		if (state >= 0) {
			fprintf(c->out, "Parameters:\n");
			json_object_object_foreach(params, key, val) {
				const char *desc = tool_jstr(pinfo, key, NULL);

				fprintf(c->out, "  %-16s %s", key, json_object_get_string(val));
				if (desc)
					fprintf(c->out, "%*s%s",
						(int)(16 - strlen(json_object_get_string(val))), "  ",
						desc);
				fputc('\n', c->out);
			}
		} else {
			if (pinfo) {
				fprintf(c->out, "Parameters of %s:\n", kmod_module_get_path(k.mod));
				json_object_object_foreach(pinfo, key, val)
					fprintf(c->out, "  %-16s %s\n", key, json_object_get_string(val));
			}
			fprintf(c->out, "Load it with: flexctl load [--module PATH] [NAME=VALUE...]\n");
		}
	}
	json_object_put(st);
	kmodctl_close(&k);
	return 0;
}

/* ---- load ---- */

/* Check each param=value against the module's parm list; build the option string. */
static int build_options(struct flexctl *c, struct kmodctl *k, int argc, char **argv,
			 char *opts, size_t len)
{
	struct json_object *pinfo = module_parm_info(k);
	size_t used = 0;

	opts[0] = '\0';
	for (int i = 0; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		char name[64];
		int n;

		if (!eq || eq == argv[i]) {
			json_object_put(pinfo);
			return ctl_usage_error(c, "load", "bad parameter '%s': expected name=value",
					       argv[i]);
		}
		snprintf(name, sizeof(name), "%.*s", (int)(eq - argv[i]), argv[i]);
		if (pinfo && !json_object_object_get_ex(pinfo, name, NULL)) {
			char known[512] = "";
			size_t kl = 0;

			json_object_object_foreach(pinfo, key, val) {
				(void)val;
				kl += snprintf(known + kl, kl < sizeof(known) ? sizeof(known) - kl : 0,
					       "%s%s", kl ? ", " : "", key);
			}
			json_object_put(pinfo);
			return ctl_usage_error(c, "load", "module %s has no parameter '%s' (it has: %s)",
					       FLEX_MODULE_NAME, name, known);
		}
		n = snprintf(opts + used, len - used, "%s%s", used ? " " : "", argv[i]);
		if (n < 0 || (size_t)n >= len - used) {
			json_object_put(pinfo);
			return ctl_usage_error(c, "load", "parameters too long");
		}
		used += n;
	}
	json_object_put(pinfo);
	return 0;
}

int cmd_load(struct flexctl *c, int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "module", required_argument, NULL, 'm' },
		CTL_COMMON_LONGOPTS,
		{ 0 }
	};
	const char *path = NULL;
	char options[2048];
	struct kmodctl k;
	int opt, err, state;

	while ((opt = getopt_long(argc, argv, "m:hj", lopts, NULL)) != -1) {
		if (ctl_common_opt(c, opt))
			continue;
		if (opt == 'm')
			path = optarg;
		else
			return ctl_usage_error(c, "load", "unknown option");
	}
	if (kmodctl_open(c, &k, path, true)) {
		kmodctl_close(&k);
		return FLEXCTL_EXIT_FAIL;
	}
	err = build_options(c, &k, argc - optind, argv + optind, options, sizeof(options));
	if (err) {
		kmodctl_close(&k);
		return err;
	}
	state = kmod_module_get_initstate(k.mod);
	if (state == KMOD_MODULE_LIVE || state == KMOD_MODULE_COMING) {
		kmodctl_close(&k);
		return ctl_error(c, "module %s is already loaded (unload it first to change parameters)",
				 FLEX_MODULE_NAME);
	}
	if (k.from_path)
		err = kmod_module_insert_module(k.mod, 0, options);
	else
		err = kmod_module_probe_insert_module(k.mod, KMOD_PROBE_FAIL_ON_LOADED, options,
						      NULL, NULL, NULL);
	if (err == -EEXIST || err > 0) {
		/* > 0: libkmod stopped on KMOD_PROBE_FAIL_ON_LOADED. */
		err = ctl_error(c, "module %s is already loaded", FLEX_MODULE_NAME);
	} else if (err == -EPERM || err == -EACCES) {
		err = ctl_error(c, "permission denied loading %s: loading modules needs root "
				"(CAP_SYS_MODULE)", kmod_module_get_path(k.mod));
	} else if (err == -ENOEXEC) {
		err = ctl_error(c, "%s is not a valid module for this kernel (built for another "
				"kernel version? see dmesg)", kmod_module_get_path(k.mod));
	} else if (err) {
		err = ctl_error(c, "loading %s%s%s failed: %s (the module logs why: see dmesg)",
				kmod_module_get_path(k.mod), *options ? " with " : "", options,
				strerror(-err));
	}
	if (err) {
		kmodctl_close(&k);
		return err;
	}
	kmodctl_close(&k);
	if (c->json) {
		struct json_object *o = json_object_new_object();

		tool_jset_str(o, "module", FLEX_MODULE_NAME);
		tool_jset_str(o, "action", "loaded");
		tool_jset_str(o, "options", options);
		out_json(c, o);
		json_object_put(o);
	} else {
		fprintf(c->out, "flex module loaded%s%s\n", *options ? " with " : "", options);
	}
	return 0;
}

/* ---- unload ---- */

int cmd_unload(struct flexctl *c, int argc, char **argv)
{
	static const struct option uopts[] = { CTL_COMMON_LONGOPTS, { 0 } };
	struct kmod_module *mod = NULL;
	struct kmod_ctx *ctx;
	int opt, err, state;

	while ((opt = getopt_long(argc, argv, "hj", uopts, NULL)) != -1)
		if (!ctl_common_opt(c, opt))
			return ctl_usage_error(c, "unload", "unknown option");
	if (optind != argc)
		return ctl_usage_error(c, "unload", "unexpected argument '%s'", argv[optind]);
	ctx = kmod_new(NULL, NULL);
	if (!ctx)
		return ctl_error(c, "libkmod: cannot create a context (out of memory?)");
	err = kmod_module_new_from_name(ctx, FLEX_MODULE_NAME, &mod);
	if (err) {
		kmod_unref(ctx);
		return ctl_error(c, "libkmod: %s", strerror(-err));
	}
	state = kmod_module_get_initstate(mod);
	if (state < 0) {
		err = ctl_error(c, "the flex module is not loaded");
		goto out;
	}
	err = kmod_module_remove_module(mod, 0);
	if (err == -EBUSY || err == -EAGAIN) {
		err = ctl_error(c, "the flex module is in use (%d references): close every "
				"/dev/flex* file and stop the processes using it first",
				kmod_module_get_refcnt(mod));
	} else if (err == -EPERM || err == -EACCES) {
		err = ctl_error(c, "permission denied unloading flex: unloading modules needs root "
				"(CAP_SYS_MODULE)");
	} else if (err) {
		err = ctl_error(c, "unloading flex failed: %s", strerror(-err));
	} else if (c->json) {
		struct json_object *o = json_object_new_object();

		tool_jset_str(o, "module", FLEX_MODULE_NAME);
		tool_jset_str(o, "action", "unloaded");
		out_json(c, o);
		json_object_put(o);
	} else {
		fprintf(c->out, "flex module unloaded\n");
	}
out:
	kmod_module_unref(mod);
	kmod_unref(ctx);
	return err;
}
