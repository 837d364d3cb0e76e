# SPDX-License-Identifier: GPL-2.0
# Installing the kernel module and its udev rules (make install, make
# uninstall). Included by the top-level Makefile (KVER, KDIR, DESTDIR,
# INSTALL, RESULTS come from there).
#
#   make install-module    With dkms: the sources and dkms.conf to
#                          $(DESTDIR)/usr/src/flex-$(FLEX_KO_VERSION)/, and when
#                          installing into the system (no DESTDIR), dkms add
#                          and dkms install for $(KVER), the kernel the
#                          headers are for (KVER= chooses another); DKMS then
#                          rebuilds it for each kernel installed later.
#                          Without dkms (DKMS=): kmod/flex.ko built for
#                          $(KVER) and installed by Kbuild's modules_install
#                          as $(DESTDIR)/lib/modules/$(KVER)/extra/kmod/flex.ko
#                          (its path in modules.order), then depmod into the
#                          system. Unsigned, as kmod/flex.ko is: the kernel's
#                          signing key is not in the headers package, so
#                          CONFIG_MODULE_SIG_ALL is off for this step.
#   make install-udev      tools/udev/60-flex.rules to $(UDEVRULESDIR): the
#                          device nodes for group "flex", mode 0660; into the
#                          system, also the group (a system group) and a
#                          udev reload and trigger.
#   make uninstall-module, uninstall-udev
#                          remove them (dkms remove --all into the system);
#                          the group stays, it may have members.
#   make check-dkms        tests/install/check-dkms: dkms build against the
#                          installed headers in a scratch DKMS tree, the
#                          result loaded in the VM (dkms.tap).

FLEX_KO_VERSION	:= $(shell sed -n 's/^MODULE_VERSION("\(.*\)");$$/\1/p' kmod/flex_main.c)
DKMS		?= $(shell command -v dkms 2>/dev/null)
DKMS_SRCDIR	 = /usr/src/flex-$(FLEX_KO_VERSION)
# What DKMS builds from: the top-level Kbuild descends into kmod/.
DKMS_FILES	:= Kbuild $(wildcard kmod/*.c kmod/*.h) kmod/Kbuild $(wildcard uapi/linux/*.h)
DKMS_FILES	:= $(filter-out kmod/flex.mod.c,$(DKMS_FILES))
# Where modules_install puts it without DKMS.
PLAIN_KO	 = /lib/modules/$(KVER)/extra/kmod/flex.ko
# Rules a local install adds; a distribution package would use
# /usr/lib/udev/rules.d.
UDEVRULESDIR	?= /etc/udev/rules.d
UDEV_RULES	:= tools/udev/60-flex.rules
# Into the system: no DESTDIR.
SYSTEM_INSTALL	 = [ -z "$(DESTDIR)" ]

.PHONY: install-module uninstall-module install-udev uninstall-udev check-dkms

install-module:
	@if [ -n "$(DKMS)" ]; then \
		$(MAKE) --no-print-directory install-dkms-src && \
		if $(SYSTEM_INSTALL); then \
			if [ -n "$$($(DKMS) status -m flex -v $(FLEX_KO_VERSION))" ]; then \
				$(DKMS) remove -m flex -v $(FLEX_KO_VERSION) --all; fi && \
			$(DKMS) add -m flex -v $(FLEX_KO_VERSION) && \
			$(DKMS) install -m flex -v $(FLEX_KO_VERSION) -k $(KVER); \
		fi; \
	else \
		$(MAKE) --no-print-directory kmod && \
		$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_PATH=$(DESTDIR) INSTALL_MOD_DIR=extra \
			CONFIG_MODULE_SIG_ALL= modules_install && \
		if $(SYSTEM_INSTALL); then depmod $(KVER); fi; \
	fi

# The DKMS source tree alone (make install-module runs it when dkms is there).
.PHONY: install-dkms-src
install-dkms-src:
	$(INSTALL) -d $(DESTDIR)$(DKMS_SRCDIR)/kmod $(DESTDIR)$(DKMS_SRCDIR)/uapi/linux
	for f in $(DKMS_FILES); do $(INSTALL) -m 644 $$f $(DESTDIR)$(DKMS_SRCDIR)/$$f || exit 1; done
	sed 's/@VERSION@/$(FLEX_KO_VERSION)/' tools/dkms/dkms.conf > $(DESTDIR)$(DKMS_SRCDIR)/dkms.conf
	chmod 644 $(DESTDIR)$(DKMS_SRCDIR)/dkms.conf

uninstall-module:
	@if $(SYSTEM_INSTALL) && [ -n "$(DKMS)" ] && \
	    [ -n "$$($(DKMS) status -m flex -v $(FLEX_KO_VERSION))" ]; then \
		echo "$(DKMS) remove -m flex -v $(FLEX_KO_VERSION) --all"; \
		$(DKMS) remove -m flex -v $(FLEX_KO_VERSION) --all; \
	fi
	rm -rf $(DESTDIR)$(DKMS_SRCDIR)
	rm -f $(DESTDIR)$(PLAIN_KO)
	-rmdir --ignore-fail-on-non-empty $(dir $(DESTDIR)$(PLAIN_KO)) $(DESTDIR)/lib/modules/$(KVER)/extra \
		2>/dev/null
	@if $(SYSTEM_INSTALL) && command -v depmod >/dev/null; then depmod $(KVER); fi

install-udev:
	$(INSTALL) -d $(DESTDIR)$(UDEVRULESDIR)
	$(INSTALL) -m 644 $(UDEV_RULES) $(DESTDIR)$(UDEVRULESDIR)/
	@if $(SYSTEM_INSTALL); then \
		getent group flex >/dev/null || { echo "groupadd --system flex"; groupadd --system flex; }; \
		if command -v udevadm >/dev/null && [ -d /run/udev ]; then \
			udevadm control --reload && udevadm trigger --action=add --subsystem-match=flex; \
		fi; \
	fi

uninstall-udev:
	rm -f $(addprefix $(DESTDIR)$(UDEVRULESDIR)/,$(notdir $(UDEV_RULES)))
	@if $(SYSTEM_INSTALL) && command -v udevadm >/dev/null && [ -d /run/udev ]; then \
		udevadm control --reload; fi

check-dkms: kmod tools
	@mkdir -p $(RESULTS)
	@echo "dkms: build and load"
	@tests/install/check-dkms "$(MAKE)" $(KVER) $(FLEX_KO_VERSION) $(abspath $(RESULTS)) \
		> $(RESULTS)/dkms.tap; status=$$?; \
	awk '/^(not ok|Bail out)/ { p = 1; print; next } /^ok / { p = 0 } p && /^#/' \
		$(RESULTS)/dkms.tap; exit $$status
